#!/usr/bin/env python3
"""Writes WSClean's IMAGING_WEIGHT_SPECTRUM of MS to OUT, for tests/imaging/test_weighting_vs_wsclean.cpp:

    dump_imaging_weights.py MS OUT

A line "rows channels", then per row "row w_0 ... w_{channels-1}" (the first correlation; WSClean
writes the same value to each), read with python-casacore, floats written to round-trip.
"""
import sys

import casacore.tables as tables

t = tables.table(sys.argv[1], ack=False)
w = t.getcol("IMAGING_WEIGHT_SPECTRUM")[:, :, 0]
with open(sys.argv[2], "w") as out:
    out.write("%d %d\n" % w.shape)
    for r, row in enumerate(w):
        out.write("%d %s\n" % (r, " ".join(repr(float(x)) for x in row)))
