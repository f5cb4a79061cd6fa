# Prototype of the plan's degridding (predict) formulas, checked against a direct FT.
import sys, numpy as np
import casacore.tables as ct
C = 299792458.0
N = int(sys.argv[1]); dl = float(sys.argv[2]) * np.pi / 180 / 3600
W, sigma, beta, e0 = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
ms = ct.table('/tmp/h6/t.ms', ack=False); uvw = ms.getcol('UVW')
f = ct.table('/tmp/h6/t.ms/SPECTRAL_WINDOW', ack=False).getcol('CHAN_FREQ')[0][1]
u, v, w = (uvw[:, k] * f / C for k in range(3))
rng = np.random.default_rng(3)
model = np.zeros((N, N))  # [x, y], Jy/pixel
for _ in range(20): model[rng.integers(0, N), rng.integers(0, N)] = rng.uniform(0.1, 1)
phi = lambda x: np.where(np.abs(x) < 1, np.exp(beta * W * ((1 - x * x).clip(0) ** e0 - 1)), 0.0)
xg, wg = np.polynomial.legendre.leggauss(int(1.5 * W) + 22)
corr = lambda s: 1.0 / ((W / 2) * np.sum(wg[None, :] * phi(xg)[None, :] * np.cos(np.pi * W * np.outer(s, xg)), axis=1))
pix = np.arange(N) - N // 2
L = -pix * dl; M = pix * dl
t0 = np.sqrt(1 - L[:, None] ** 2 - M[None, :] ** 2) - 1
nshift = -0.5 * (t0.max() + t0.min()); t = t0 + nshift; tmax = np.abs(t).max()
nu = nv = int(2 * np.ceil(N * sigma / 2)); dw = 0.5 / sigma / tmax
flip = w < 0; uf, vf, wf = np.where(flip, -u, u), np.where(flip, -v, v), np.abs(w)
nplanes = int((wf.max() - wf.min()) / dw + W); wmin = 0.5 * (wf.min() + wf.max()) - 0.5 * (nplanes - 1) * dw
Ku = -uf * dl * nu; Kv = vf * dl * nv; Kw = (wf - wmin) / dw; h = W / 2
mc = model * corr(pix / nu)[:, None] * corr(pix / nv)[None, :] * corr(t.ravel() * dw).reshape(N, N)
out = np.zeros(len(u), complex)
for p in range(nplanes):
    sel = np.abs(Kw - p) < h
    if not sel.any(): continue
    G = np.zeros((nu, nv), complex)
    G[np.ix_(pix % nu, pix % nv)] = mc * np.exp(+2j * np.pi * (wmin + p * dw) * t)
    F = np.fft.ifft2(G) * nu * nv          # sum with e^{+2 pi i k i / n}
    ku0 = np.ceil(Ku[sel] - h).astype(int); kv0 = np.ceil(Kv[sel] - h).astype(int)
    kw = phi((p - Kw[sel]) / h); acc = np.zeros(sel.sum(), complex)
    for a in range(W):
        fu = phi((ku0 + a - Ku[sel]) / h)
        for b in range(W):
            acc += F[(ku0 + a) % nu, (kv0 + b) % nv] * fu * phi((kv0 + b - Kv[sel]) / h)
    out[sel] += acc * kw
out *= np.exp(-2j * np.pi * wf * nshift)
out = np.where(flip, np.conj(out), out)
ref = np.zeros(len(u), complex)
for ix, iy in zip(*np.nonzero(model)):
    ref += model[ix, iy] * np.exp(2j * np.pi * (u * L[ix] + v * M[iy] + w * t0[ix, iy]))
print(f'degrid N={N} dl={sys.argv[2]}" W={W} sigma={sigma} nplanes={nplanes}: max|err|/max|V|={np.abs(out-ref).max()/np.abs(ref).max():.2e}'
      f' rms rel={np.sqrt(np.mean(np.abs(out-ref)**2)/np.mean(np.abs(ref)**2)):.2e}')
