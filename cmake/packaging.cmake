# The Debian package (cd build && cpack -G DEB): what cmake --install installs, under /usr.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuclean)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "gpuclean maintainers <maintainers@users.noreply.a-seed-bd44f767.example>"
    CACHE STRING "The Debian package's Maintainer")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # gpuclean_VERSION_ARCH.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# The extended description (the summary above is its first line).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "Clark, Hogbom and multiscale CLEAN of radio images on NVIDIA GPUs (CUDA),
with a CPU path where no GPU is found: the gpuclean command and the gpuclean Python package,
which also works as WSClean's deconvolution engine (-python-deconvolution),
and gpuclean image: dirty images and PSFs from MeasurementSets, gridded on the GPU.
Ships the CUDA runtime and cuFFT libraries it links, in /usr/lib/gpuclean.")
# The libraries' packages, from dpkg-shlibdeps; the bundled CUDA libraries are the package's own.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CPACK_PACKAGING_INSTALL_PREFIX}/${GPUCLEAN_INSTALL_PRIVATE_LIBDIR})
if(TARGET _gpuclean)
  # The module is built for one Python version (its file name says cpython-3XY).
  string(REPLACE "." ";" py_version ${GPUCLEAN_PYTHON_VERSION})
  list(GET py_version 0 py_major)
  list(GET py_version 1 py_minor)
  math(EXPR py_next "${py_minor} + 1")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= ${py_major}.${py_minor}~), python3 (<< ${py_major}.${py_next}), python3-numpy")
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS wsclean)
  set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/deb/postinst ${CMAKE_CURRENT_LIST_DIR}/deb/prerm)
  set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
endif()
include(CPack)
