#!/usr/bin/env bash
# The Debian package as a user gets it (docs/packaging.md): cpack builds it from
# this build folder; it is unpacked into a scratch root and checked (files,
# dependencies, `winnow --version`). Where the suite may (root, dpkg present, no
# winnow package installed already), it is also installed with dpkg -i, and
# `winnow --version` and the Python drop-in example run from another folder
# without PYTHONPATH; the package is removed again at the end.
#   check_deb.sh BUILD_DIR WORK_DIR SOURCE_DIR VERSION
set -euo pipefail
build=$1 work=$2 src=$3 version=$4
rm -rf "$work"
mkdir -p "$work"
unset PYTHONPATH  # and Debian's python3 (/usr/bin), which finds /usr/lib/python3/dist-packages

(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) ||
  { tail -n 40 "$work/cpack.log"; echo "check_deb: cpack failed" >&2; exit 1; }
deb=$(ls "$work"/out/winnow_"$version"_*.deb)
dpkg-deb --info "$deb" >"$work/control"
grep -q '^ Depends:.*python3-torch' "$work/control" || { cat "$work/control"; exit 1; }
grep -q '^ Depends:.*libtorch' "$work/control" ||
  { echo "check_deb: dpkg-shlibdeps did not find libtorch" >&2; cat "$work/control"; exit 1; }

dpkg-deb -x "$deb" "$work/root"
for f in usr/bin/winnow usr/lib/systemd/system/winnow-serve@.service \
  usr/lib/python3/dist-packages/winnow/__init__.py usr/include/winnow/version.h \
  usr/include/winnow/curation/dataset/dataset.h usr/lib/cmake/winnow/winnowConfig.cmake \
  usr/share/doc/winnow/examples/serve.conf usr/lib/winnow/libwinnow_torchscript.so; do
  [[ -e "$work/root/$f" ]] || { echo "check_deb: the package lacks /$f" >&2; exit 1; }
done
ls "$work"/root/usr/lib/python3/dist-packages/winnow/_winnow*.so >/dev/null
[[ $("$work/root/usr/bin/winnow" --version) == "winnow $version" ]]
# The packaged Python module finds the packaged TorchScript plugin, in the package's
# layout (winnow.dask's workers build a torchscript embedder with it).
"$build/bin/make_torchscript_projection" "$work/projection.pt"
PYTHONPATH="$work/root/usr/lib/python3/dist-packages" /usr/bin/python3 -c "import json, sys; \
import winnow._curation as c; assert c.__file__.startswith(sys.argv[2]), c.__file__; \
assert c.Curator(json.dumps({'embedder': 'torchscript:' + sys.argv[1]})).dim == 16" \
  "$work/projection.pt" "$work/root/"

# Installing for real needs root and must not replace a winnow the machine has.
if [[ $(id -u) -ne 0 ]] || dpkg-query -W winnow >/dev/null 2>&1; then
  echo "check_deb: unpacked and checked; not installed (not root, or winnow is installed)"
  exit 0
fi
trap 'dpkg -r winnow >/dev/null 2>&1 || true' EXIT
dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; exit 1; }
cd "$work"
[[ $(/usr/bin/winnow --version) == "winnow $version" ]]
getent passwd winnow >/dev/null
if command -v systemd-analyze >/dev/null; then  # the unit parses and its command exists
  systemd-analyze verify /usr/lib/systemd/system/winnow-serve@.service
fi
/usr/bin/python3 -c "import winnow, sys; assert winnow.__version__ == sys.argv[1], winnow.__file__" "$version"
# The drop-in example: one epoch of Fashion-MNIST with the installed module.
OMP_NUM_THREADS=1 /usr/bin/python3 "$src/examples/python/train_fashion_mnist.py" --epochs 1 >"$work/example.log" 2>&1 ||
  { tail -n 20 "$work/example.log"; exit 1; }
grep -q 'test accuracy' "$work/example.log" || { tail -n 20 "$work/example.log"; exit 1; }
echo "check_deb: installed, ran winnow --version and the Python example, removed"
