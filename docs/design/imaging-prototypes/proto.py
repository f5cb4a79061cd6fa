# Prototype of the plan's w-stacking + ES-kernel formulas (own code), checked against a direct FT.
import sys, numpy as np
import casacore.tables as ct
C = 299792458.0
N = int(sys.argv[1]); dl = float(sys.argv[2]) * np.pi / 180 / 3600
W, sigma, beta, e0 = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
ms = ct.table('/tmp/h6/t.ms', ack=False)
uvw = ms.getcol('UVW'); data = ms.getcol('DATA')
freqs = ct.table('/tmp/h6/t.ms/SPECTRAL_WINDOW', ack=False).getcol('CHAN_FREQ')[0]
U, V, Wl, D = [], [], [], []
for ch, f in enumerate(freqs):
    U.append(uvw[:, 0] * f / C); V.append(uvw[:, 1] * f / C); Wl.append(uvw[:, 2] * f / C)
    D.append(0.5 * (data[:, ch, 0] + data[:, ch, 1]))
u, v, w, vis = (np.concatenate(a) for a in (U, V, Wl, D))
c = np.ones_like(u)  # natural, unit weights
# Hermitian flip to w >= 0
neg = w < 0; u[neg] *= -1; v[neg] *= -1; w[neg] *= -1; vis[neg] = np.conj(vis[neg])
phi = lambda x: np.where(np.abs(x) < 1, np.exp(beta * W * ((1 - x * x).clip(0) ** e0 - 1)), 0.0)
xg, wg = np.polynomial.legendre.leggauss(int(1.5 * W) + 2 + 20)
corr = lambda s: 1.0 / ((W / 2) * np.sum(wg[None, :] * phi(xg)[None, :] * np.cos(np.pi * W * np.outer(s, xg)), axis=1))
pix = np.arange(N) - N // 2
L = -pix * dl; M = pix * dl
l2 = L[:, None] ** 2 + M[None, :] ** 2          # [x, y]
t0 = np.sqrt(1 - l2) - 1
nshift = -0.5 * (t0.max() + t0.min()); t = t0 + nshift
tmax = np.abs(t).max()
nu = int(2 * np.ceil(N * sigma / 2)); nv = nu
dw = 0.5 / sigma / tmax
wmin_d, wmax_d = w.min(), w.max()
nplanes = int((wmax_d - wmin_d) / dw + W)
wmin = 0.5 * (wmin_d + wmax_d) - 0.5 * (nplanes - 1) * dw
Ku = -u * dl * nu; Kv = v * dl * nv; Kw = (w - wmin) / dw
cv = c * vis * np.exp(2j * np.pi * w * nshift)
h = W / 2
img = np.zeros((N, N))
for p in range(nplanes):
    sel = np.abs(Kw - p) < h
    if not sel.any(): continue
    G = np.zeros((nu, nv), complex)
    ku0 = np.ceil(Ku[sel] - h).astype(int); kv0 = np.ceil(Kv[sel] - h).astype(int)
    kw = phi((p - Kw[sel]) / h)
    for a in range(W):
        fu = phi((ku0 + a - Ku[sel]) / h)
        for b in range(W):
            fv = phi((kv0 + b - Kv[sel]) / h)
            np.add.at(G, ((ku0 + a) % nu, (kv0 + b) % nv), cv[sel] * fu * fv * kw)
    F = np.fft.fft2(G)
    sub = F[np.ix_(pix % nu, pix % nv)]          # [x, y]
    img += (sub * np.exp(-2j * np.pi * (wmin + p * dw) * t)).real
img *= corr(pix / nu)[:, None] * corr(pix / nv)[None, :] * corr(t.ravel() * dw).reshape(N, N)
# direct FT (same normalisation: sum of c)
dft = np.zeros((N, N))
for ix in range(N):
    ph = np.exp(-2j * np.pi * (np.outer(np.full(N, L[ix]), u) + np.outer(M, v) + np.outer(t0[ix], w)))
    dft[ix] = (ph * (c * vis)[None, :]).real.sum(1)
err = np.abs(img - dft).max() / np.abs(dft).max()
rms = np.sqrt(((img - dft) ** 2).mean()) / np.sqrt((dft ** 2).mean())
print(f'N={N} dl={sys.argv[2]}" W={W} sigma={sigma} nu={nu} nplanes={nplanes} dw={dw:.1f} wmax={wmax_d:.0f} '
      f'max|err|/peak={err:.2e} rms rel={rms:.2e}')
