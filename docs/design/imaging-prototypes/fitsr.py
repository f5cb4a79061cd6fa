import numpy as np
def read(path):
    raw=open(path,'rb').read()
    hdr={}; i=0
    while True:
        c=raw[i:i+80].decode(); i+=80
        k=c[:8].strip()
        if k=='END': break
        if c[8:10]=='= ':
            v=c[10:].split('/')[0].strip()
            hdr[k]=v
    off=((i+2879)//2880)*2880
    n1,n2=int(hdr['NAXIS1']),int(hdr['NAXIS2'])
    a=np.frombuffer(raw[off:off+4*n1*n2],dtype='>f4').reshape(n2,n1).astype(np.float64)
    return a,hdr
