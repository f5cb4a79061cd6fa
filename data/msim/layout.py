"""MeerKAT's antennas in ITRF and the UVW tracks of their baselines under Earth rotation."""

import numpy as np

# The array reference (katpoint's "ref" antenna), WGS84 geodetic.
SITE_LAT_DEG = -(30 + 42 / 60 + 39.8 / 3600)
SITE_LON_DEG = 21 + 26 / 60 + 38.0 / 3600
SITE_HEIGHT_M = 1035.0
DISH_DIAMETER_M = 13.5

# Pads m000..m063, (east, north, up) [m] from the array reference: SARAO's katconfig values, the
# same table as data/arrays.cpp. m000..m020 are mostly the dense core, the later pads the spiral arms.
MEERKAT_ENU = np.array([
    (-8.264, -207.290, 8.597), (1.121, -171.762, 8.471), (-32.113, -224.236, 8.645),
    (-66.518, -202.276, 8.285), (-123.624, -252.946, 8.513), (-102.088, -283.120, 8.875),
    (-18.232, -295.428, 9.188), (-89.592, -402.732, 9.769), (-93.527, -535.026, 10.445),
    (32.357, -371.056, 10.140), (88.095, -511.872, 11.186), (84.012, -352.078, 10.151),
    (140.019, -368.267, 10.449), (236.792, -393.460, 11.124), (280.669, -285.792, 10.547),
    (210.644, -219.142, 9.738), (288.159, -185.873, 9.795), (199.624, -112.263, 8.955),
    (105.727, -245.870, 9.529), (170.787, -285.223, 10.071), (97.016, -299.638, 9.877),
    (-295.966, -327.241, 8.117), (-373.002, 0.544, 5.649), (-322.306, -142.185, 6.825),
    (-351.046, 150.088, 4.845), (-181.978, 225.617, 5.068), (-99.004, 17.045, 6.811),
    (40.475, -23.112, 7.694), (-51.179, -87.170, 7.636), (-88.762, -124.111, 7.700),
    (171.281, 113.949, 7.278), (246.567, 93.756, 7.469), (461.275, 175.505, 7.367),
    (580.678, 863.959, 3.600), (357.811, -28.308, 8.972), (386.152, -180.894, 10.290),
    (388.257, -290.759, 10.812), (380.286, -459.309, 12.172), (213.308, -569.080, 11.946),
    (253.748, -592.147, 12.441), (-26.858, -712.219, 11.833), (-287.545, -661.678, 9.949),
    (-361.714, -460.318, 8.497), (-629.853, -128.326, 5.264), (-896.164, 600.497, -0.640),
    (-1832.860, 266.750, 0.108), (-1467.341, 1751.923, -7.078), (-578.296, -517.297, 7.615),
    (-2805.653, 2686.863, -9.755), (-3605.957, 436.462, 2.696), (-2052.336, -843.715, 5.338),
    (-850.255, -769.359, 7.614), (-593.192, -1148.652, 10.550), (9.365, -1304.462, 15.032),
    (871.980, -499.812, 13.364), (1201.780, 96.492, 10.023), (1598.403, 466.668, 6.990),
    (294.645, 3259.915, -10.637), (2805.764, 2686.873, -3.660), (3686.427, 758.895, 11.822),
    (3419.683, -1840.478, 23.697), (-16.409, -2323.779, 21.304), (-1440.632, -2503.773, 21.683),
    (-3419.585, -1840.480, 16.383),
])

_WGS84_A = 6378137.0
_WGS84_F = 1 / 298.257223563


def geodetic_to_itrf(lat_deg, lon_deg, height_m):
    """ITRF (geocentric X, Y, Z) [m] of a WGS84 geodetic position."""
    lat, lon = np.radians(lat_deg), np.radians(lon_deg)
    e2 = _WGS84_F * (2 - _WGS84_F)
    n = _WGS84_A / np.sqrt(1 - e2 * np.sin(lat) ** 2)
    return np.array([(n + height_m) * np.cos(lat) * np.cos(lon),
                     (n + height_m) * np.cos(lat) * np.sin(lon),
                     (n * (1 - e2) + height_m) * np.sin(lat)])


def meerkat_itrf(n_antennas=64):
    """(names, ITRF positions [n, 3]) of n pads spread evenly over the pad list, so that a
    subarray keeps some long baselines besides the core."""
    if not 2 <= n_antennas <= len(MEERKAT_ENU):
        raise ValueError(f"--antennas {n_antennas} is out of range; MeerKAT has 2 to {len(MEERKAT_ENU)}")
    pads = np.round(np.linspace(0, len(MEERKAT_ENU) - 1, n_antennas)).astype(int)
    lat, lon = np.radians(SITE_LAT_DEG), np.radians(SITE_LON_DEG)
    east = np.array([-np.sin(lon), np.cos(lon), 0.0])
    north = np.array([-np.sin(lat) * np.cos(lon), -np.sin(lat) * np.sin(lon), np.cos(lat)])
    up = np.array([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)])
    enu = MEERKAT_ENU[pads]
    itrf = geodetic_to_itrf(SITE_LAT_DEG, SITE_LON_DEG, SITE_HEIGHT_M) + enu @ np.array([east, north, up])
    return [f"m{p:03d}" for p in pads], itrf


def gmst_rad(mjd_utc):
    """Greenwich mean sidereal time (IAU 1982 linear term; UT1 taken as UTC, good to a second)."""
    return np.radians((280.46061837 + 360.98564736629 * (mjd_utc - 51544.5)) % 360.0)


def transit_mjd(day_mjd, ra_deg):
    """The first time on or after day_mjd (UTC) at which ra_deg crosses the site's meridian."""
    lst = np.degrees(gmst_rad(day_mjd)) + SITE_LON_DEG
    return day_mjd + ((ra_deg - lst) % 360.0) / 360.98564736629


def baseline_uvw(itrf, ant1, ant2, mjd_utc, ra_deg, dec_deg):
    """UVW [m] of the baselines ant2 - ant1 (the MeasurementSet's sign) at the times mjd_utc,
    one row per (ant1, ant2, time) entry. The textbook rotation of the ITRF baseline by the
    Greenwich hour angle (Thompson, Moran & Swenson eq. 4.1), without precession or nutation:
    UVW and the simulated DATA agree exactly, a real observation's UVW would differ by ~0.3 deg."""
    b = itrf[ant2] - itrf[ant1]
    h = gmst_rad(mjd_utc) - np.radians(ra_deg)
    d = np.radians(dec_deg)
    x, y, z = b[:, 0], b[:, 1], b[:, 2]
    u = np.sin(h) * x + np.cos(h) * y
    v = -np.sin(d) * np.cos(h) * x + np.sin(d) * np.sin(h) * y + np.cos(d) * z
    w = np.cos(d) * np.cos(h) * x - np.cos(d) * np.sin(h) * y + np.sin(d) * z
    return np.stack([u, v, w], axis=1)
