#!/usr/bin/python3
"""Unpacks the real-telescope MeasurementSets of tests/realdata (README.md there) into a folder.

usage: /usr/bin/python3 tests/realdata/prepare.py OUT_DIR [--only NAME ...] [--archives DIR] [--quiet]

Each archive is a public project's test MS, as fetched (or as its folder packed with tar);
see README.md for origins and licences. OUT_DIR/NAME.ms is made for each entry of SETS, and
a stamp file beside it records the archive's SHA-256, so that a second run with the same
archive does nothing (idempotent). SPLITS are single-spw copies cut from those MSs. Then one line per MS is printed: correlations, rows,
channels, spectral windows, fields, columns.

The archives are looked for, in order, in: --archives DIR, $GPUCLEAN_REALDATA_DIR, this
script's folder, <checkout>/../shared/data/realdata, <checkout>/.devdata/realdata. Exit
status 2 (with a message) when an archive is found nowhere, so that tests can skip.
Needs python3-casacore and numpy (Debian's /usr/bin/python3).
"""
import argparse
import hashlib
import os
import shutil
import sys
import tarfile

# name -> (archive, member folder inside it, what it covers)
SETS = {
    "vla_j1008": ("day2_TDEM0003_10s_norx_1src_1spw.ms.tgz", "day2_TDEM0003_10s_norx_1src_1spw.ms",
                  "VLA Ka band, circular RR RL LR LL, WEIGHT_SPECTRUM, raw (uncalibrated) DATA"),
    "ovro_lwa": ("2018-03-21-01_26_33_0004384620257280_000000_downselected.ms.tgz",
                 "2018-03-21-01_26_33_0004384620257280_000000_downselected.ms",
                 "OVRO-LWA 28 MHz snapshot, linear XX YY XY YX (non-canonical order), autocorrelations, wide field"),
    "lofar_generic": ("tNDPPP-generic.MS.tgz", "tNDPPP-generic.MS",
                      "LOFAR HBA, 8 stations to 27 km, CORRECTED_DATA, WEIGHT_SPECTRUM, 31% flagged"),
    "lofar_demix": ("tDemix.in_MS.tgz", "tDemix_tmp/tDemix.MS",
                    "LOFAR HBA core, raw DATA (~1e6), WEIGHT_SPECTRUM of ~1e-13 with zeros"),
    "wsrt_3c343": ("tNDPPP.in_MS.tgz", "tNDPPP_tmp.MS",
                   "WSRT 1.18 GHz 3C343.1, no WEIGHT_SPECTRUM, decreasing channel frequencies"),
    "alma_mssel": ("mssel_test_small.ms.tgz", "mssel_test_small.ms",
                   "ALMA 3 mm, 2 fields (field 0 all FLAG_ROW), 3 spws (2 used), 2 polarization setups, "
                   "WEIGHT_SPECTRUM column with undefined cells, raw DATA"),
}

# name -> (the MS it is cut from, TaQL row selection, spw kept, polarization setup kept): single-spw
# copies, for WSClean 3.1, whose multi-spw path (-reorder) images alma_mssel's spw 2 3.4e-3 off the
# single-spw copy of the same rows (README.md).
SPLITS = {
    "alma_mssel_f1spw2": ("alma_mssel", "FIELD_ID==1 && DATA_DESC_ID==2", 2, 0),
    # spw 1: 64 channels of decreasing frequency and negative CHAN_WIDTH (test_image_decreasing_vs_wsclean).
    "alma_mssel_f1spw1": ("alma_mssel", "FIELD_ID==1 && DATA_DESC_ID==1", 1, 0),
}


def checkout_dir():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def archive_dirs(given):
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [given, os.environ.get("GPUCLEAN_REALDATA_DIR"), here,
            os.path.join(checkout_dir(), "..", "shared", "data", "realdata"),
            os.path.join(checkout_dir(), ".devdata", "realdata")]
    return [d for d in dirs if d]


def find_archive(name, given):
    for d in archive_dirs(given):
        path = os.path.join(d, name)
        if os.path.isfile(path):
            return path
    return None


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def unpack(archive, member, out_ms):
    """Extracts `member` (a folder) of the archive as out_ms."""
    staging = out_ms + ".unpacking"
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    prefix = member.rstrip("/") + "/"
    with tarfile.open(archive, "r:*") as tar:
        members = [m for m in tar.getmembers()
                   if (m.name == member or m.name.startswith(prefix)) and (m.isfile() or m.isdir())]
        if not members:
            raise SystemExit(f"prepare.py: {archive} has no {member}")
        for m in members:
            if m.name.startswith("/") or ".." in m.name.split("/"):
                raise SystemExit(f"prepare.py: unsafe path {m.name} in {archive}")
        tar.extractall(staging, members=members)
    for root, dirs, files in os.walk(staging):  # the archives' read-only bits would stop writers
        for n in dirs + files:
            p = os.path.join(root, n)
            os.chmod(p, os.stat(p).st_mode | 0o200)
    shutil.rmtree(out_ms, ignore_errors=True)
    os.rename(os.path.join(staging, member), out_ms)
    shutil.rmtree(staging, ignore_errors=True)


def split(source_ms, out_ms, where, spw, pol):
    """Copies the rows `where` of source_ms (all of one data description: spw, pol) into out_ms,
    whose DATA_DESCRIPTION, SPECTRAL_WINDOW and POLARIZATION then hold that one setup (row 0)."""
    from casacore.tables import table

    work = out_ms + ".source"
    for p in (work, out_ms):
        shutil.rmtree(p, ignore_errors=True)
    shutil.copytree(source_ms, work)
    t = table(work, readonly=False, ack=False)
    for k in list(t.getkeywords()):  # subtables named but not shipped (ALMA's ASDM_*) stop a deep copy
        v = t.getkeyword(k)
        if isinstance(v, str) and v.startswith("Table:") and not os.path.isdir(v.split(":", 1)[1].strip()):
            t.removekeyword(k)
    s = t.query(where)
    s.copy(out_ms, deep=True)
    s.close()
    t.close()
    shutil.rmtree(work)
    t = table(out_ms, readonly=False, ack=False)
    t.putcol("DATA_DESC_ID", [0] * t.nrows())
    t.close()
    for sub, keep in (("SPECTRAL_WINDOW", spw), ("POLARIZATION", pol)):
        st = table(os.path.join(out_ms, sub), readonly=False, ack=False)
        st.removerows([r for r in range(st.nrows()) if r != keep])
        st.close()
    dd = table(os.path.join(out_ms, "DATA_DESCRIPTION"), readonly=False, ack=False)
    dd.removerows(list(range(1, dd.nrows())))
    dd.putcell("SPECTRAL_WINDOW_ID", 0, 0)
    dd.putcell("POLARIZATION_ID", 0, 0)
    dd.close()


def describe(name, ms):
    import numpy as np
    from casacore.tables import table

    names = {5: "RR", 6: "RL", 7: "LR", 8: "LL", 9: "XX", 10: "XY", 11: "YX", 12: "YY"}
    t = table(ms, ack=False)
    sub = lambda n: table(os.path.join(ms, n), ack=False)
    pol, spw, fld, dd = sub("POLARIZATION"), sub("SPECTRAL_WINDOW"), sub("FIELD"), sub("DATA_DESCRIPTION")
    used_dd = sorted(set(t.getcol("DATA_DESC_ID").tolist()))
    corr = ["".join(names.get(int(c), "?") + " " for c in pol.getcell("CORR_TYPE", int(dd.getcell("POLARIZATION_ID", d)))).strip()
            for d in used_dd]
    chans = [f"spw{int(dd.getcell('SPECTRAL_WINDOW_ID', d))}:{int(spw.getcell('NUM_CHAN', int(dd.getcell('SPECTRAL_WINDOW_ID', d))))}"
             for d in used_dd]
    a1, a2 = t.getcol("ANTENNA1"), t.getcol("ANTENNA2")
    cols = t.colnames()
    ws = "WEIGHT_SPECTRUM" in cols and t.iscelldefined("WEIGHT_SPECTRUM", 0)
    print(f"{name}: {ms}: correlations {' / '.join(corr)}; nrow {t.nrows()} (autos {int((a1 == a2).sum())}); "
          f"channels {' '.join(chans)}; spws {spw.nrows()}; fields {fld.nrows()} ({', '.join(fld.getcol('NAME'))}); "
          f"FLAG_ROW {np.mean(t.getcol('FLAG_ROW')):.3f}; WEIGHT_SPECTRUM {'yes' if ws else 'no'}; "
          f"columns {' '.join(c for c in cols if c.endswith('DATA'))}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--only", nargs="*", choices=sorted(SETS) + sorted(SPLITS), help="prepare only these")
    p.add_argument("--archives", help="the folder that holds the archives")
    p.add_argument("--quiet", action="store_true", help="print no summary")
    a = p.parse_args()
    names = a.only or list(SETS) + list(SPLITS)
    os.makedirs(a.out_dir, exist_ok=True)
    for name in names:
        if name in SPLITS:
            continue
        archive_name, member, _ = SETS[name]
        archive = find_archive(archive_name, a.archives)
        if archive is None:
            print(f"prepare.py: {archive_name} not found in: {', '.join(archive_dirs(a.archives))}", file=sys.stderr)
            sys.exit(2)
        out_ms = os.path.join(a.out_dir, name + ".ms")
        stamp = out_ms + ".sha256"
        digest = sha256(archive)
        if not (os.path.isdir(out_ms) and os.path.isfile(stamp) and open(stamp).read().strip() == digest):
            unpack(archive, member, out_ms)
            with open(stamp, "w") as f:
                f.write(digest + "\n")
        if not a.quiet:
            describe(name, out_ms)
    for name in names:
        if name not in SPLITS:
            continue
        source, where, spw, pol = SPLITS[name]
        if source not in names:
            raise SystemExit(f"prepare.py: {name} is cut from {source}: prepare both (--only {source} {name})")
        out_ms = os.path.join(a.out_dir, name + ".ms")
        stamp, source_stamp = out_ms + ".sha256", os.path.join(a.out_dir, source + ".ms.sha256")
        digest = open(source_stamp).read().strip() + f" {where} {spw} {pol}"
        if not (os.path.isdir(out_ms) and os.path.isfile(stamp) and open(stamp).read().strip() == digest):
            split(os.path.join(a.out_dir, source + ".ms"), out_ms, where, spw, pol)
            with open(stamp, "w") as f:
                f.write(digest + "\n")
        if not a.quiet:
            describe(name, out_ms)


if __name__ == "__main__":
    main()
