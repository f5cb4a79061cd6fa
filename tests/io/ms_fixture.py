#!/usr/bin/env python3
"""MeasurementSet fixtures for tests/io/test_ms_reader.cpp, with python-casacore:

    ms_fixture.py edit MS [--flags] [--flag-row] [--weights] [--weight-spectrum] [--corrected]
                          [--autocorrelations N] [--second-field] [--second-spw] [--nan] [--flag-all]
                          [--frame REF] [--shift-centre] [--reverse-channels] [--negative-width]
                          [--unordered-channels] [--second-spw-one-channel] [--weight-spectrum-undefined]
                          [--extra-field] [--only-autocorrelations]
                          [--flag-baseline A B] [--remove-baseline A B]
                          [--zero-weight-rows K J] [--remove-rows K J]
                          [--storage-manager TYPE] [--field-storage-manager TYPE] [--dysco]
                          [--remove-subtable NAME] [--remove-subtable-keyword NAME]
                          [--remove-subtable-file NAME] [--moving-centre RATE] [--ephemeris-id]
    ms_fixture.py expect MS OUT [--column C] [--field F] [--channels S E] [--pol P]
    ms_fixture.py direction MS    (field 0's PHASE_DIR in J2000 by casacore.measures: "ra dec" [rad])
    ms_fixture.py hold-lock MS SECONDS READY  (a permanent write lock for SECONDS; writes its pid to READY)

`edit` changes an MS that data/simulate_ms.py made, deterministically. --reverse-channels lists
the channels in decreasing frequency (the spectral window's columns and the channel axis of DATA,
FLAG, WEIGHT_SPECTRUM, CORRECTED_DATA and MODEL_DATA reversed: the same samples and sky), after
the other edits; --negative-width then stores CHAN_WIDTH negative, --unordered-channels swaps the
frequencies of channels 0 and 1. --second-spw-one-channel moves every 7th row (from row 1) to a
second spectral window of one channel, its DATA, FLAG and WEIGHT_SPECTRUM cells cut to that channel
(the columns made variable-shaped, as in an MS of spws of different widths). The options that break it
(for the reader's one-line errors) come last: --storage-manager stores DATA with a data manager of
that type name, which casacore cannot load unless the type exists (table.dat is rewritten, as no
casacore program can write a type it does not have); --field-storage-manager does so for FIELD's
NAME; --dysco stores DATA with DyscoStMan (lossy, read back identically by any casacore with it). `expect` writes what the
reader must return, computed here with NumPy from python-casacore's own reading of the MS (an
independent reference): a line "rows channels", then per kept row "row u v w" and per channel
"re im weight". The Stokes rule is WSClean's (W31:msproviders/msprovider.cpp CopyData/CopyWeights).
"""

import argparse
import os
import shutil
import struct
import sys

import casacore.tables as tables
import numpy as np


def edit(args):
    rng = np.random.default_rng(7)
    t = tables.table(args.ms, readonly=False, ack=False)
    n = t.nrows()
    data = t.getcol("DATA")
    shape = data.shape  # rows, channels, correlations
    if args.weights:  # XX and YY weights differ, so 4·min(wa, wb) is not 4·wa
        t.putcol("WEIGHT", rng.uniform(0.5, 2.0, (n, shape[2])).astype(np.float32))
    if args.flags:  # single correlations as well as whole samples
        t.putcol("FLAG", rng.random(shape) < 0.1)
    if args.flag_row:  # FLAG_ROW alone, FLAG left as it is
        fr = np.zeros(n, bool)
        fr[::17] = True
        t.putcol("FLAG_ROW", fr)
    np.seterr(invalid="ignore")  # the --nan cells stay non-finite
    if args.nan:
        data[3, 0, 0] = np.nan
        data[5, shape[1] - 1, shape[2] - 1] = complex(np.inf, 0)
        t.putcol("DATA", data)
    if args.flag_all:
        t.putcol("FLAG", np.ones(shape, bool))
    if args.weight_spectrum:
        desc = tables.makearrcoldesc("WEIGHT_SPECTRUM", 0.0, valuetype="float", shape=list(shape[1:]))
        t.addcols(desc)
        t.putcol("WEIGHT_SPECTRUM", rng.uniform(0.1, 3.0, shape).astype(np.float32))
    if args.corrected:
        desc = tables.makearrcoldesc("CORRECTED_DATA", 0j, valuetype="complex", shape=list(shape[1:]))
        t.addcols(desc)
        t.putcol("CORRECTED_DATA", (2 * data + (0.25 - 0.5j)).astype(np.complex64))
    if args.second_field:
        f = tables.table(args.ms + "/FIELD", readonly=False, ack=False)
        f.copyrows(f, 0, -1, 1)
        f.putcell("NAME", 1, "OTHER")
        f.putcell("PHASE_DIR", 1, f.getcell("PHASE_DIR", 0) + 0.01)
        f.close()
        field = t.getcol("FIELD_ID")
        field[::5] = 1
        t.putcol("FIELD_ID", field)
    if args.second_spw:
        for name in ("SPECTRAL_WINDOW", "DATA_DESCRIPTION"):
            s = tables.table(f"{args.ms}/{name}", readonly=False, ack=False)
            s.copyrows(s, 0, -1, 1)
            if name == "SPECTRAL_WINDOW":
                s.putcell("CHAN_FREQ", 1, s.getcell("CHAN_FREQ", 0) + 1e9)
            else:
                s.putcell("SPECTRAL_WINDOW_ID", 1, 1)
            s.close()
        dd = t.getcol("DATA_DESC_ID")
        dd[1::7] = 1
        t.putcol("DATA_DESC_ID", dd)
    if args.second_spw_one_channel:  # rows 1::7 in spw 1, one channel (spw 0's first), cells of that shape
        for name in ("SPECTRAL_WINDOW", "DATA_DESCRIPTION"):
            s = tables.table(f"{args.ms}/{name}", readonly=False, ack=False)
            s.copyrows(s, 0, -1, 1)
            if name == "SPECTRAL_WINDOW":
                for column in ("CHAN_FREQ", "CHAN_WIDTH", "EFFECTIVE_BW", "RESOLUTION"):
                    s.putcell(column, 1, s.getcell(column, 0)[:1].copy())
                s.putcell("NUM_CHAN", 1, 1)
            else:
                s.putcell("SPECTRAL_WINDOW_ID", 1, 1)
            s.close()
        dd = t.getcol("DATA_DESC_ID")
        dd[1::7] = 1
        t.putcol("DATA_DESC_ID", dd)
        for name, zero in (("DATA", 0j), ("FLAG", False), ("WEIGHT_SPECTRUM", 0.0), ("CORRECTED_DATA", 0j)):
            if name not in t.colnames():
                continue
            values = t.getcol(name)
            desc = t.getcoldesc(name)
            t.removecols(name)
            t.addcols(tables.makearrcoldesc(name, zero, valuetype=desc["valueType"], ndim=2))
            for r in range(n):
                t.putcell(name, r, values[r] if dd[r] == 0 else values[r][:1].copy())
    if args.weight_spectrum_undefined:  # the column exists, its cells hold no array
        t.addcols(tables.makearrcoldesc("WEIGHT_SPECTRUM", 0.0, valuetype="float", ndim=2))
    if args.frame or args.shift_centre:
        f = tables.table(args.ms + "/FIELD", readonly=False, ack=False)
        if args.frame:
            keywords = f.getcolkeywords("PHASE_DIR")
            keywords["MEASINFO"]["Ref"] = args.frame
            f.putcolkeywords("PHASE_DIR", keywords)
        if args.shift_centre:
            f.putcell("PHASE_DIR", 0, f.getcell("PHASE_DIR", 0) + 1e-6)
        f.close()
    if args.reverse_channels:  # the same samples listed in decreasing frequency: the same sky
        for name in ("DATA", "CORRECTED_DATA", "MODEL_DATA", "FLAG", "WEIGHT_SPECTRUM"):
            if name in t.colnames() and t.iscelldefined(name, 0):
                t.putcol(name, t.getcol(name)[:, ::-1, :].copy())
        s = tables.table(args.ms + "/SPECTRAL_WINDOW", readonly=False, ack=False)
        for name in ("CHAN_FREQ", "CHAN_WIDTH", "EFFECTIVE_BW", "RESOLUTION"):
            for r in range(s.nrows()):
                s.putcell(name, r, s.getcell(name, r)[::-1].copy())
        s.close()
    if args.negative_width or args.unordered_channels:
        s = tables.table(args.ms + "/SPECTRAL_WINDOW", readonly=False, ack=False)
        if args.negative_width:  # as CASA stores lower sidebands (ALMA)
            s.putcell("CHAN_WIDTH", 0, -np.abs(s.getcell("CHAN_WIDTH", 0)))
        if args.unordered_channels:  # channels 0 and 1 swapped: neither increasing nor decreasing
            f = s.getcell("CHAN_FREQ", 0)
            f[[0, 1]] = f[[1, 0]]
            s.putcell("CHAN_FREQ", 0, f)
        s.close()
    if args.extra_field:  # a FIELD row that no main-table row refers to
        f = tables.table(args.ms + "/FIELD", readonly=False, ack=False)
        f.copyrows(f, 0, -1, 1)
        f.close()
    if args.only_autocorrelations:  # every row ANTENNA2 = ANTENNA1: nothing to image
        t.putcol("ANTENNA2", t.getcol("ANTENNA1"))
    if args.autocorrelations:  # copies of the first rows with ANTENNA2 = ANTENNA1
        k = args.autocorrelations
        t.copyrows(t, 0, n, k)
        a1 = t.getcol("ANTENNA1", n, k)
        t.putcol("ANTENNA2", a1, n, k)
        t.putcol("UVW", np.zeros((k, 3)), n, k)
    # Pairs for tests that a flagged baseline, or rows of zero weight, image as if absent: one
    # option changes the rows, its twin deletes the same rows (last, as it renumbers them).
    if args.flag_baseline:
        rows = baseline_rows(t, args.flag_baseline)
        flag = t.getcol("FLAG")
        flag[rows] = True
        t.putcol("FLAG", flag)
    if args.zero_weight_rows:
        rows = every_kth_row(t, args.zero_weight_rows)
        weight = t.getcol("WEIGHT")
        weight[rows] = 0
        t.putcol("WEIGHT", weight)
        if "WEIGHT_SPECTRUM" in t.colnames() and t.iscelldefined("WEIGHT_SPECTRUM", 0):
            spectrum = t.getcol("WEIGHT_SPECTRUM")
            spectrum[rows] = 0
            t.putcol("WEIGHT_SPECTRUM", spectrum)
    if args.remove_baseline:
        t.removerows(baseline_rows(t, args.remove_baseline))
    if args.remove_rows:
        t.removerows(every_kth_row(t, args.remove_rows))
    if args.dysco:
        move_column(t, "DATA", {"TYPE": "DyscoStMan", "NAME": "DyscoData",
                                "SPEC": {"dataBitCount": 10, "weightBitCount": 12, "distribution": "TruncatedGaussian",
                                         "distributionTruncation": 2.5, "normalization": "AF", "studentTNu": 0.0}})
    if args.storage_manager:
        move_column(t, "DATA", {"TYPE": "TiledColumnStMan", "NAME": "Renamed"})
    if args.moving_centre is not None or args.ephemeris_id:
        f = tables.table(args.ms + "/FIELD", readonly=False, ack=False)
        if args.moving_centre is not None:  # PHASE_DIR + RATE·(t - TIME) rad, RATE in rad/s
            f.putcell("NUM_POLY", 0, 1)
            for column in ("PHASE_DIR", "DELAY_DIR", "REFERENCE_DIR"):
                d = f.getcell(column, 0)
                f.putcell(column, 0, np.array([d[0], [args.moving_centre, args.moving_centre]]))
        if args.ephemeris_id:  # a field that follows ephemeris table 0, which is not there
            f.addcols(tables.maketabdesc(tables.makescacoldesc("EPHEMERIS_ID", 0)))
            f.putcol("EPHEMERIS_ID", np.zeros(f.nrows(), np.int32))
        f.close()
    if args.field_storage_manager:
        f = tables.table(args.ms + "/FIELD", readonly=False, ack=False)
        move_column(f, "NAME", {"TYPE": "IncrementalStMan", "NAME": "Renamed"})
        f.close()
    for name in args.remove_subtable_keyword:
        t.removekeyword(name)
    t.close()
    if args.storage_manager:
        rename_data_manager(args.ms, "TiledColumnStMan", args.storage_manager)
    if args.field_storage_manager:
        rename_data_manager(args.ms + "/FIELD", "IncrementalStMan", args.field_storage_manager)
    for name in args.remove_subtable + args.remove_subtable_keyword:
        shutil.rmtree(f"{args.ms}/{name}")
    for name in args.remove_subtable_file:
        os.remove(f"{args.ms}/{name}/table.dat")


def move_column(t, name, dminfo):
    """Stores column `name` with its own data manager (dminfo), values kept."""
    values = t.getcol(name)
    desc = t.getcoldesc(name)
    t.removecols(name)
    if dminfo["TYPE"] == "DyscoStMan":
        desc["option"] = 5  # Direct | FixedShape, as Dysco requires
    t.addcols(tables.maketabdesc(tables.makecoldesc(name, desc)), dminfo=dminfo)
    t.putcol(name, values)


def rename_data_manager(table, old, new):
    """Renames the data manager type `old` (used once) in table.dat to `new`.

    table.dat is a casacore AipsIO file: a string is a big-endian uint32 length and its bytes, and
    an object starts with the magic 0xbebebebe and its length in bytes (from the magic on), which
    every object around the string must lose or gain."""
    path = table + "/table.dat"
    with open(path, "rb") as f:
        b = bytearray(f.read())
    key = struct.pack(">I", len(old)) + old.encode()
    at = b.find(key)
    if at < 0 or b.find(key, at + 1) >= 0:
        sys.exit(f"ms_fixture: {path} does not hold the data manager type {old} once")
    change = len(new) - len(old)
    magic = b.find(b"\xbe\xbe\xbe\xbe")
    while magic >= 0:
        length = struct.unpack(">I", b[magic + 4:magic + 8])[0]
        if magic <= at < magic + length:
            b[magic + 4:magic + 8] = struct.pack(">I", length + change)
        magic = b.find(b"\xbe\xbe\xbe\xbe", magic + 1)
    b[at:at + len(key)] = struct.pack(">I", len(new)) + new.encode()
    with open(path, "wb") as f:
        f.write(b)


def baseline_rows(t, pair):
    """Rows of the baseline between antennas pair[0] and pair[1] (either order); none is an error,
    so that a test cannot compare an MS with itself."""
    a1, a2 = t.getcol("ANTENNA1"), t.getcol("ANTENNA2")
    a, b = pair
    rows = np.flatnonzero(((a1 == a) & (a2 == b)) | ((a1 == b) & (a2 == a)))
    if len(rows) == 0:
        sys.exit(f"ms_fixture: no rows on baseline {a}-{b}")
    return rows


def every_kth_row(t, kj):
    """Rows r with r % k == j: spread over every baseline and time."""
    k, j = kj
    if not 0 <= j < k or j >= t.nrows():
        sys.exit(f"ms_fixture: rows r % {k} == {j}: none of {t.nrows()}")
    return np.arange(j, t.nrows(), k)


def expect(args):
    t = tables.table(args.ms, ack=False)
    column = args.column or ("CORRECTED_DATA" if "CORRECTED_DATA" in t.colnames() else "DATA")
    data = t.getcol(column)
    flag = t.getcol("FLAG")
    if "WEIGHT_SPECTRUM" in t.colnames() and t.iscelldefined("WEIGHT_SPECTRUM", 0):
        weight = t.getcol("WEIGHT_SPECTRUM")
    else:
        weight = np.repeat(t.getcol("WEIGHT")[:, None, :], data.shape[1], axis=1)
    s, e = args.channels or (0, data.shape[1])
    data, flag, weight = data[:, s:e], flag[:, s:e], weight[:, s:e]
    ddid = t.getcol("DATA_DESC_ID")
    keep = (t.getcol("ANTENNA1") != t.getcol("ANTENNA2")) & (t.getcol("FIELD_ID") == args.field)
    pol_id = tables.table(args.ms + "/DATA_DESCRIPTION", ack=False).getcol("POLARIZATION_ID")[ddid[keep][0]]
    keep &= ddid == ddid[keep][0]
    types = list(tables.table(args.ms + "/POLARIZATION", ack=False).getcell("CORR_TYPE", pol_id))
    np.seterr(invalid="ignore")  # inf + (-inf) in a NaN test row
    finite = np.isfinite(data.real) & np.isfinite(data.imag)
    wanted = {"i": 1, "xx": 9, "yy": 12, "rr": 5, "ll": 8}[args.pol]
    if wanted in types:
        a = types.index(wanted)
        value = np.where(finite[..., a], data[..., a], 0)
        w = np.where(finite[..., a] & ~flag[..., a], weight[..., a], 0)
    else:
        a, b = (types.index(9), types.index(12)) if 9 in types else (types.index(5), types.index(8))
        value = (data[..., a] + data[..., b]) * np.float32(0.5)
        value = np.where(np.isfinite(value.real) & np.isfinite(value.imag), value, 0)
        ok = finite[..., a] & finite[..., b] & ~flag[..., a] & ~flag[..., b]
        w = np.where(ok, 4 * np.minimum(weight[..., a], weight[..., b]), 0)
    w[t.getcol("FLAG_ROW")] = 0
    uvw = t.getcol("UVW")
    rows = np.flatnonzero(keep)
    with open(args.out, "w") as out:
        out.write(f"{len(rows)} {value.shape[1]}\n")
        for r in rows:
            out.write(f"{r} {uvw[r, 0]:.17g} {uvw[r, 1]:.17g} {uvw[r, 2]:.17g}\n")
            out.write(" ".join(f"{np.float32(v.real):.9g} {np.float32(v.imag):.9g} {np.float32(x):.9g}"
                               for v, x in zip(value[r], w[r])) + "\n")


def direction(args):
    from casacore.measures import measures
    dm = measures()
    t = tables.table(args.ms, ack=False)
    dm.do_frame(dm.epoch("UTC", f"{t.getcell('TIME', 0)}s"))
    f = tables.table(args.ms + "/FIELD", ack=False)
    ref = f.getcolkeywords("PHASE_DIR")["MEASINFO"]["Ref"]
    ra, dec = f.getcell("PHASE_DIR", 0)[0]
    j2000 = dm.measure(dm.direction(ref, f"{float(ra)!r}rad", f"{float(dec)!r}rad"), "J2000")
    print(f"{j2000['m0']['value']:.17g} {j2000['m1']['value']:.17g}")


def hold_lock(args):
    import time
    t = tables.table(args.ms, readonly=False, lockoptions="permanent", ack=False)
    with open(args.ready + ".tmp", "w") as f:
        f.write(f"{os.getpid()}\n")
    os.rename(args.ready + ".tmp", args.ready)  # whole, once the lock is held
    time.sleep(args.seconds)
    t.close()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("edit")
    e.add_argument("ms")
    for flag in ("flags", "flag-row", "weights", "weight-spectrum", "corrected", "second-field", "second-spw",
                 "nan", "flag-all", "shift-centre", "reverse-channels", "negative-width", "second-spw-one-channel",
                 "unordered-channels", "weight-spectrum-undefined",
                 "extra-field", "only-autocorrelations"):
        e.add_argument("--" + flag, action="store_true")
    e.add_argument("--autocorrelations", type=int, default=0)
    e.add_argument("--frame", help="PHASE_DIR's reference frame, e.g. GALACTIC or AZEL")
    for option, what in (("flag-baseline", "FLAG every sample of baseline A-B"),
                         ("remove-baseline", "delete the rows of baseline A-B"),
                         ("zero-weight-rows", "WEIGHT (and WEIGHT_SPECTRUM) 0 on rows r % K == J"),
                         ("remove-rows", "delete rows r % K == J")):
        e.add_argument("--" + option, type=int, nargs=2, help=what)
    e.add_argument("--storage-manager", help="store DATA with a data manager of this type name")
    e.add_argument("--field-storage-manager", help="store FIELD's NAME with a data manager of this type name")
    e.add_argument("--dysco", action="store_true", help="store DATA with DyscoStMan")
    for option, what in (("remove-subtable", "delete this subtable's folder (the keyword stays)"),
                         ("remove-subtable-keyword", "delete this subtable and its keyword"),
                         ("remove-subtable-file", "delete this subtable's table.dat")):
        e.add_argument("--" + option, action="append", default=[], help=what)
    e.add_argument("--moving-centre", type=float, help="field 0's PHASE_DIR moves at RATE rad/s (NUM_POLY 1)")
    e.add_argument("--ephemeris-id", action="store_true", help="field 0 follows ephemeris table 0 (absent)")
    x = sub.add_parser("expect")
    x.add_argument("ms")
    x.add_argument("out")
    x.add_argument("--column")
    x.add_argument("--field", type=int, default=0)
    x.add_argument("--channels", type=int, nargs=2)
    x.add_argument("--pol", default="i")
    d = sub.add_parser("direction")
    d.add_argument("ms")
    h = sub.add_parser("hold-lock")
    h.add_argument("ms")
    h.add_argument("seconds", type=float)
    h.add_argument("ready")
    args = p.parse_args()
    {"edit": edit, "expect": expect, "direction": direction, "hold-lock": hold_lock}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
