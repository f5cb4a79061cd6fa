# numpy model of WSClean 3.1 Stokes-I weighting + direct FT, to check the plan's reading of the source
import sys, numpy as np
sys.path.insert(0, '/tmp/h6'); from fitsr import read
import casacore.tables as ct
C = 299792458.0
ms = ct.table('/tmp/h6/t.ms', ack=False)
uvw = ms.getcol('UVW'); data = ms.getcol('DATA'); wt = ms.getcol('WEIGHT'); flag = ms.getcol('FLAG')
freqs = ct.table('/tmp/h6/t.ms/SPECTRAL_WINDOW', ack=False).getcol('CHAN_FREQ')[0]
N = int(sys.argv[1]); scale = float(sys.argv[2]) * np.pi / 180 / 3600; mode = sys.argv[3]; R = float(sys.argv[4]); chans = [int(c) for c in sys.argv[5].split(',')]
rank = float(sys.argv[6]); prefix = sys.argv[7]; v36 = len(sys.argv) > 8
P = int(np.ceil(N * 1.2)); P += (4 - P % 4) % 4
W = H = P
grid = np.zeros((H // 2, W)); tot = 0.0
vis = []
for ch in chans:
    lam = C / freqs[ch]
    I = 0.5 * (data[:, ch, 0] + data[:, ch, 1])
    w = 4 * np.minimum(wt[:, 0], wt[:, 1]) * (~flag[:, ch, 0]) * (~flag[:, ch, 1])
    u, v, ww = uvw[:, 0] / lam, uvw[:, 1] / lam, uvw[:, 2] / lam
    uf, vf = np.where(v < 0, -u, u), np.abs(v)
    x = np.floor(uf * W * scale + W / 2).astype(int); y = np.floor(vf * H * scale).astype(int)
    ok = (x >= 0) & (x < W) & (y < H // 2)
    np.add.at(grid, (y[ok], x[ok]), w[ok]); tot += w[ok].sum()
    vis.append((u, v, ww, I, w, x, y, ok))
if mode == 'briggs':
    avg = (grid ** 2).sum() / tot; s2 = (5 * 10 ** (-R)) ** 2 / avg
    grid = np.where(grid != 0, 1 / (1 + grid * s2), 0.0) if v36 else 1 / (1 + grid * s2)
elif mode == 'uniform':
    grid = np.where(grid != 0, 1 / np.where(grid != 0, grid, 1), 0.0)
else:
    grid = (grid != 0).astype(float)
if rank >= 1:
    new = grid.copy(); d = 8; Hh = H // 2
    for yy, xx in zip(*np.nonzero(grid)):
        x1 = 0 if xx <= d else xx - d; x2 = W if xx + d >= W else xx + d
        y1 = 0 if yy <= d else yy - d; y2 = Hh if yy + d >= Hh else yy + d
        win = grid[y1:y2, x1:x2]; nz = win[win != 0]
        mean = nz.sum() / len(nz)
        if grid[yy, xx] > mean * rank: new[yy, xx] = mean * rank
    grid = new
pix = (np.arange(N) - N // 2)
L = -pix * scale; M = pix * scale
dirty = np.zeros((N, N)); psf = np.zeros((N, N)); totw = 0.0
for (u, v, ww, I, w, x, y, ok) in vis:
    img = np.zeros_like(w); img[ok] = grid[y[ok], x[ok]]
    cw = w * img; keep = cw != 0; totw += cw[keep].sum()
    u, v, ww, I, cw = u[keep], v[keep], ww[keep], I[keep], cw[keep]
    for iy in range(N):
        m = M[iy]; n1 = np.sqrt(1 - L ** 2 - m ** 2) - 1
        ph = np.exp(-2j * np.pi * (np.outer(L, u) + m * v[None, :] + np.outer(n1, ww)))
        dirty[iy] += (ph * (cw * I)[None, :]).real.sum(1)
        psf[iy] += (ph * cw[None, :]).real.sum(1)
dirty /= totw; psf /= totw
c = psf[N // 2, N // 2]; dirty /= c; psf /= c
wd, h = read(prefix + '-dirty.fits'); wp, _ = read(prefix + '-psf.fits')
print('WSCIMGWG ours', totw, 'wsclean', h['WSCIMGWG'])
print('dirty: max|diff|/peak', np.abs(wd - dirty).max() / np.abs(dirty).max(), ' psf max|diff|', np.abs(wp - psf).max())
e = np.abs(wd - dirty) / np.abs(dirty).max()
for q in (0.25, 0.5, 0.75):
    a = int(N * (1 - q) / 2); print('central %d%%: max err %.2e' % (q * 100, e[a:N - a, a:N - a].max()))
