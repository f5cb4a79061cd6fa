# Standalone Python build: the gpuclean libraries of a build made elsewhere (GPUCLEAN_PREBUILT_DIR)
# as one imported target, gpuclean_app, with what they link. The shared libraries a bare machine
# lacks (CFITSIO, FFTW, libgd, libpng) come from the system or from GPUCLEAN_LIBRARY_DIR, where
# scripts/device-pack.sh puts them as .devlib (versioned names only: libcfitsio.so.10).
set(GPUCLEAN_PREBUILT_DIR "" CACHE PATH "Build folder with app/libgpuclean_app.a and the other libraries")
set(GPUCLEAN_LIBRARY_DIR "" CACHE PATH "Folder with the shared libraries the prebuilt libraries need")
if(NOT EXISTS ${GPUCLEAN_PREBUILT_DIR}/app/libgpuclean_app.a OR NOT EXISTS ${GPUCLEAN_PREBUILT_DIR}/python/prebuilt-config.cmake)
  message(FATAL_ERROR "GPUCLEAN_PREBUILT_DIR must name a gpuclean build folder (with app/libgpuclean_app.a and "
                      "python/prebuilt-config.cmake): '${GPUCLEAN_PREBUILT_DIR}'")
endif()
get_filename_component(prebuilt ${GPUCLEAN_PREBUILT_DIR} ABSOLUTE)

# Whether the prebuilt libraries hold the GPU code (written by the top-level build).
include(${prebuilt}/python/prebuilt-config.cmake)

set(archives)
foreach(module app clean io data select)
  list(APPEND archives ${prebuilt}/${module}/libgpuclean_${module}.a)
endforeach()

set(externals)
foreach(name cfitsio fftw3f_threads fftw3f gd png16)
  find_library(lib_${name} NAMES ${name} HINTS ${GPUCLEAN_LIBRARY_DIR})
  if(NOT lib_${name})
    file(GLOB lib_${name} ${GPUCLEAN_LIBRARY_DIR}/lib${name}.so.*)
    list(SORT lib_${name})
    list(GET lib_${name} 0 lib_${name})
  endif()
  if(NOT lib_${name})
    message(FATAL_ERROR "lib${name} not found; give its folder with -DGPUCLEAN_LIBRARY_DIR=")
  endif()
  list(APPEND externals ${lib_${name}})
endforeach()

find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(Threads REQUIRED)
add_library(gpuclean_app INTERFACE)
# The archives reference each other (app -> clean -> select, io, data): one group resolves them.
target_link_libraries(gpuclean_app INTERFACE "-Wl,--start-group" ${archives} "-Wl,--end-group" ${externals}
                      OpenMP::OpenMP_CXX Threads::Threads)
if(GPUCLEAN_HAVE_CUDA)
  find_package(CUDAToolkit REQUIRED)
  target_link_libraries(gpuclean_app INTERFACE CUDA::cudart CUDA::cufft)
  target_compile_definitions(gpuclean_app INTERFACE GPUCLEAN_HAVE_CUDA=1)
  target_include_directories(gpuclean_app INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
endif()
if(GPUCLEAN_LIBRARY_DIR)
  # Their own dependencies (curl, jpeg, ...) lie beside them. An old-style RPATH (unlike RUNPATH)
  # also serves those indirect dependencies, so Python needs no LD_LIBRARY_PATH with that folder,
  # which would hand its own modules (pyexpat, _ssl) this folder's older libraries.
  get_filename_component(library_dir ${GPUCLEAN_LIBRARY_DIR} ABSOLUTE)
  target_link_options(gpuclean_app INTERFACE "-Wl,-rpath-link,${library_dir}" "-Wl,--disable-new-dtags"
                      "-Wl,-rpath,${library_dir}")
endif()
