"""Writes a MeasurementSet (v2) with python-casacore: MAIN plus the subtables that imagers read."""

from dataclasses import dataclass

import casacore.tables as tables
import numpy as np

from .polarization import CORR_TYPE

# --correlations: the correlations written, by name (msim/polarization.py turns the Stokes sky into
# them), as CORR_TYPE (casacore's Stokes enumeration: I = 1, RR..LL = 5..8, XX..YY = 9..12) and
# CORR_PRODUCT (the receptors of antenna 1 and antenna 2).
CORRELATION_NAMES = {"xxyy": ("XX", "YY"), "i": ("I",), "linear": ("XX", "XY", "YX", "YY"),
                     "circular": ("RR", "RL", "LR", "LL"), "rrll": ("RR", "LL")}
_PRODUCTS = {"XX": [0, 0], "XY": [0, 1], "YX": [1, 0], "YY": [1, 1], "I": [0, 0],
             "RR": [0, 0], "RL": [0, 1], "LR": [1, 0], "LL": [1, 1]}
CORRELATIONS = {mode: ([CORR_TYPE[n] for n in names], [_PRODUCTS[n] for n in names])
                for mode, names in CORRELATION_NAMES.items()}


def feed_receptors(correlations):
    """The FEED subtable's POLARIZATION_TYPE and RECEPTOR_ANGLE [rad] of ideal feeds: X at position
    angle 0 and Y at 90 deg (also for "i", as before); R and L with one phase reference, 0."""
    if correlations in ("circular", "rrll"):
        return ["R", "L"], [0.0, 0.0]
    return ["X", "Y"], [0.0, np.pi / 2]


@dataclass
class Observation:
    """What the subtables describe. antenna_itrf [n, 3] in metres; times in MJD seconds (UTC)."""
    telescope: str
    antenna_names: list
    antenna_itrf: np.ndarray
    dish_diameter_m: float
    freqs_hz: np.ndarray
    chan_width_hz: float
    ra_deg: float
    dec_deg: float
    correlations: str
    time_range_s: tuple


def write_ms(path, obs, ant1, ant2, time_s, interval_s, uvw_m, data, sigma):
    """Creates path (which must not exist) with one row per visibility: data [rows, chans, corrs]
    complex; sigma: the noise of each real and imaginary part (0: noiseless, weights of 1)."""
    nchan, ncorr = data.shape[1:]
    desc = tables.maketabdesc([
        tables.makearrcoldesc("DATA", 0j, valuetype="complex", shape=[nchan, ncorr]),
        tables.makearrcoldesc("FLAG", False, valuetype="boolean", shape=[nchan, ncorr]),
        tables.makearrcoldesc("WEIGHT", 0.0, valuetype="float", shape=[ncorr]),
        tables.makearrcoldesc("SIGMA", 0.0, valuetype="float", shape=[ncorr])])
    ms = tables.default_ms(str(path), desc)
    rows = len(ant1)
    ms.addrows(rows)
    ms.putcol("ANTENNA1", ant1.astype(np.int32))
    ms.putcol("ANTENNA2", ant2.astype(np.int32))
    ms.putcol("UVW", uvw_m)
    ms.putcol("TIME", time_s)
    ms.putcol("TIME_CENTROID", time_s)
    ms.putcol("INTERVAL", np.full(rows, interval_s))
    ms.putcol("EXPOSURE", np.full(rows, interval_s))
    ms.putcol("SCAN_NUMBER", np.ones(rows, np.int32))
    ms.putcol("STATE_ID", np.full(rows, -1, np.int32))
    ms.putcol("PROCESSOR_ID", np.full(rows, -1, np.int32))
    ms.putcol("DATA", data.astype(np.complex64))
    ms.putcol("FLAG", np.zeros(data.shape, bool))
    ms.putcol("FLAG_ROW", np.zeros(rows, bool))
    ms.putcol("WEIGHT", np.full((rows, ncorr), 1.0 / sigma ** 2 if sigma > 0 else 1.0, np.float32))
    ms.putcol("SIGMA", np.full((rows, ncorr), sigma if sigma > 0 else 1.0, np.float32))
    ms.close()
    _write_subtables(str(path), obs)


def add_corrected_data(path):
    """Adds CORRECTED_DATA, a copy of DATA, as a calibration pipeline leaves it (pipelines image
    -data-column CORRECTED_DATA)."""
    ms = tables.table(str(path), readonly=False, ack=False)
    desc = ms.getcoldesc("DATA")
    desc["name"] = "CORRECTED_DATA"
    ms.addcols(tables.maketabdesc([tables.makecoldesc("CORRECTED_DATA", desc)]))
    ms.putcol("CORRECTED_DATA", ms.getcol("DATA"))
    ms.close()


def _fill(path, name, columns):
    t = tables.table(f"{path}/{name}", readonly=False, ack=False)
    t.addrows(len(next(iter(columns.values()))))
    for column, values in columns.items():
        t.putcol(column, values)
    t.close()


def _write_subtables(path, obs):
    n_ant, nchan = len(obs.antenna_names), len(obs.freqs_hz)
    corr_type, corr_product = CORRELATIONS[obs.correlations]
    receptors, receptor_angle = feed_receptors(obs.correlations)
    start, end = obs.time_range_s
    _fill(path, "ANTENNA", {
        "NAME": obs.antenna_names, "STATION": ["MeerKAT"] * n_ant, "TYPE": ["GROUND-BASED"] * n_ant,
        "MOUNT": ["ALT-AZ"] * n_ant, "POSITION": obs.antenna_itrf, "OFFSET": np.zeros((n_ant, 3)),
        "DISH_DIAMETER": np.full(n_ant, obs.dish_diameter_m)})
    _fill(path, "FEED", {
        "ANTENNA_ID": np.arange(n_ant, dtype=np.int32), "FEED_ID": np.zeros(n_ant, np.int32),
        "SPECTRAL_WINDOW_ID": np.full(n_ant, -1, np.int32), "TIME": np.full(n_ant, (start + end) / 2),
        "INTERVAL": np.full(n_ant, end - start), "NUM_RECEPTORS": np.full(n_ant, 2, np.int32),
        "BEAM_ID": np.full(n_ant, -1, np.int32), "BEAM_OFFSET": np.zeros((n_ant, 2, 2)),
        "POLARIZATION_TYPE": np.array([receptors] * n_ant), "POSITION": np.zeros((n_ant, 3)),
        "POL_RESPONSE": np.tile(np.eye(2, dtype=np.complex64), (n_ant, 1, 1)),
        "RECEPTOR_ANGLE": np.tile(receptor_angle, (n_ant, 1))})
    _fill(path, "SPECTRAL_WINDOW", {
        "NAME": ["L-band"], "NUM_CHAN": [nchan], "CHAN_FREQ": obs.freqs_hz[None, :],
        "REF_FREQUENCY": [float(obs.freqs_hz[nchan // 2])],
        "CHAN_WIDTH": np.full((1, nchan), obs.chan_width_hz), "EFFECTIVE_BW": np.full((1, nchan), obs.chan_width_hz),
        "RESOLUTION": np.full((1, nchan), obs.chan_width_hz), "TOTAL_BANDWIDTH": [nchan * obs.chan_width_hz],
        "MEAS_FREQ_REF": [5], "NET_SIDEBAND": [1]})  # 5: TOPO
    direction = np.radians([[[obs.ra_deg, obs.dec_deg]]])
    _fill(path, "FIELD", {
        "NAME": ["SIM"], "CODE": [""], "TIME": [start], "NUM_POLY": [0], "SOURCE_ID": [-1],
        "PHASE_DIR": direction, "DELAY_DIR": direction, "REFERENCE_DIR": direction})
    _fill(path, "POLARIZATION", {
        "NUM_CORR": [len(corr_type)], "CORR_TYPE": np.array([corr_type], np.int32),
        "CORR_PRODUCT": np.array([corr_product], np.int32)})
    _fill(path, "DATA_DESCRIPTION", {"SPECTRAL_WINDOW_ID": [0], "POLARIZATION_ID": [0]})
    _fill(path, "OBSERVATION", {
        "TELESCOPE_NAME": [obs.telescope], "OBSERVER": ["gpuclean"], "PROJECT": ["simulate_ms"],
        "SCHEDULE_TYPE": [""], "TIME_RANGE": np.array([[start, end]]), "RELEASE_DATE": [end]})
