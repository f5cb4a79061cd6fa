"""Prints where `cmake --install` puts the gpuclean package for the install prefix given, relative
to it: the folder this interpreter searches for packages installed under that prefix."""
import os
import sys
import sysconfig

prefix = os.path.normpath(os.path.abspath(sys.argv[1]))
if prefix == os.path.normpath(sys.base_prefix) and "deb_system" in sysconfig.get_scheme_names():
    # Debian's /usr (cpack's prefix): /usr/lib/python3/dist-packages.
    path = sysconfig.get_path("platlib", "deb_system")
else:
    # Debian's /usr/local: lib/python3.X/dist-packages; a venv's own prefix: its site-packages.
    path = sysconfig.get_path("platlib")
    if os.path.commonpath([path, prefix]) != prefix:
        path = sysconfig.get_path("platlib", "posix_prefix", vars={"base": prefix, "platbase": prefix})
print(os.path.relpath(path, prefix))
