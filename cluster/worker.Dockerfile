# A grading worker for a Dask cluster (docs/cluster.md). Build it from the
# course's repository, at the commit the TA grades with:
#   docker build -f cluster/worker.Dockerfile -t course-grader-worker .
# Run it with the scheduler's address; bubblewrap needs user namespaces in the container:
#   docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#       course-grader-worker tls://scheduler:8786
# tests/test_cluster_docs.py checks that the pins below are pyproject.toml's.
FROM python:3.11-slim-bookworm

RUN apt-get update \
    && apt-get install --yes --no-install-recommends bubblewrap \
    && rm -rf /var/lib/apt/lists/*

# PyTorch's CPU-only wheel first (PyPI's Linux torch is the CUDA build), then the course
# with its cluster extra, at the course's pins.
RUN pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu torch==2.13.0
WORKDIR /opt/course
COPY pyproject.toml README.md LICENSE ./
COPY autograder ./autograder
RUN pip install --no-cache-dir ".[cluster]" "dask[distributed]==2026.8.0" \
    && useradd --create-home --shell /usr/sbin/nologin grader

# Never root: the kernels' sandboxes are unprivileged user namespaces.
USER grader
WORKDIR /home/grader
# Dask's own upkeep made rare (its profiler sampling the grading thread 100 times a second,
# its 20 ms event-loop checks): the grading runs about 15% faster (dask_pool.QUIET_UPKEEP,
# which tests/test_cluster_docs.py checks these against).
ENV DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False \
    DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL=1s \
    DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL=5s \
    DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL=1s
# One job at a time per worker process (the grader refuses a worker with more threads).
ENTRYPOINT ["dask", "worker", "--nthreads", "1", "--nworkers", "1"]
