# graphgpu: API and GPU worker image (CUDA runtime + CuPy wheel).
# Build: docker build -t graphgpu .   Run: see docker-compose.yml.
FROM nvidia/cuda:12.6.3-runtime-ubuntu24.04

ENV DEBIAN_FRONTEND=noninteractive PYTHONUNBUFFERED=1 \
    GRAPHGPU_DATA_DIR=/data GRAPHGPU_HOST=0.0.0.0
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv python3-pip \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
RUN python3 -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
COPY pyproject.toml setup.py README.md ./
COPY service service
COPY workers workers
COPY kernels kernels
COPY client client
RUN pip install --no-cache-dir '.[gpu]'

VOLUME /data
EXPOSE 8000
# Default: the API. The worker service overrides the command with `graphgpu worker`.
CMD ["uvicorn", "graphgpu.service.app:create_app", "--factory", "--host", "0.0.0.0", "--port", "8000"]
