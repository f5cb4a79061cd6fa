#!/usr/bin/env python3
"""Prints, per correlation, max|A - B| / max|B| of two MSs' MODEL_DATA (test_image_pol_vs_wsclean)."""
import sys

import numpy as np
from casacore import tables

a = tables.table(sys.argv[1], ack=False).getcol("MODEL_DATA")
b = tables.table(sys.argv[2], ack=False).getcol("MODEL_DATA")
scale = float(np.abs(b).max())
print(" ".join("%.6e" % (float(np.abs(a[..., k] - b[..., k]).max()) / scale) for k in range(b.shape[-1])))
