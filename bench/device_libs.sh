# Sourced by the bench/*device*.sh scripts: where the GPU machine lacks the host libraries,
# unpack the ones device-bundle.sh packed into .device/libs.tgz and put them on the library path.
if [ -f .device/libs.tgz ]; then
  mkdir -p /tmp/deplibs && tar xzf .device/libs.tgz -C /tmp/deplibs
  export LD_LIBRARY_PATH=/tmp/deplibs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
fi
