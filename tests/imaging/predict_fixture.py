#!/usr/bin/env python3
"""MeasurementSets and MODEL_DATA for the -predict tests (tests/imaging/predict_test_files.hpp),
with python-casacore:

    predict_fixture.py make MS CORRELATIONS   a 168-row MS (8 antennas, 6 times, 3 channels) by
                                              data/simulate_ms.py, CORRELATIONS xxyy, i, rrll or
                                              full (XX XY YX YY: simulate_ms.py has no such option)
    predict_fixture.py fill MS [--undefined]  adds MODEL_DATA (DATA's shape), every value 7+7j; or
                                              --undefined: of variable shape, no cell defined
    predict_fixture.py dump MS OUT            writes MODEL_DATA and what it needs to be checked

`dump` writes a line "rows channels correlations has_model", then per row
"antenna1 antenna2 field flag_row u v w", then per channel and correlation "re im flag" (MODEL_DATA
0 0 when the column is absent), floats written to round-trip.
"""
import pathlib
import sys

import casacore.tables as tables
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]


def make(ms, correlations):
    sys.path.insert(0, str(ROOT / "data"))
    import simulate_ms
    # The simulator's own modes: "full" is its four linear correlations.
    simulate_ms.main(["--out", ms, "--sky", "points", "--antennas", "8", "--hours", "1", "--integration", "600",
                      "--channels", "3", "--noise", "0.01",
                      "--correlations", "linear" if correlations == "full" else correlations])


def fill(ms, undefined):
    t = tables.table(ms, readonly=False, ack=False)
    if undefined:
        t.addcols(tables.makearrcoldesc("MODEL_DATA", 0j, valuetype="complex", ndim=2))
        t.close()
        return
    shape = t.getcol("DATA").shape
    t.addcols(tables.makearrcoldesc("MODEL_DATA", 0j, valuetype="complex", shape=list(shape[1:])))
    t.putcol("MODEL_DATA", np.full(shape, 7 + 7j, np.complex64))
    t.close()


def dump(ms, out):
    t = tables.table(ms, ack=False)
    flag = t.getcol("FLAG")
    has_model = "MODEL_DATA" in t.colnames()
    model = t.getcol("MODEL_DATA") if has_model else np.zeros(flag.shape, np.complex64)
    a1, a2, field, flag_row, uvw = (t.getcol(c) for c in ("ANTENNA1", "ANTENNA2", "FIELD_ID", "FLAG_ROW", "UVW"))
    with open(out, "w") as f:
        f.write("%d %d %d %d\n" % (*flag.shape, has_model))
        for r in range(flag.shape[0]):
            f.write("%d %d %d %d %s\n" % (a1[r], a2[r], field[r], flag_row[r], " ".join(repr(float(x)) for x in uvw[r])))
            f.write(" ".join("%r %r %d" % (float(v.real), float(v.imag), g)
                             for v, g in zip(model[r].ravel(), flag[r].ravel())) + "\n")


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "make":
        make(sys.argv[2], sys.argv[3])
    elif command == "fill":
        fill(sys.argv[2], "--undefined" in sys.argv[3:])
    elif command == "dump":
        dump(sys.argv[2], sys.argv[3])
    else:
        sys.exit("unknown command " + command)
