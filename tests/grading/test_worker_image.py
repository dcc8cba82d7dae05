"""The worker image in cluster/worker.Dockerfile (no container engine runs here to build
it): its pins are the course's, its Python the course's, its workers single-threaded."""

from __future__ import annotations

import re
import tomllib

import dask.config

from autograder.grading.dask_pool import QUIET_UPKEEP
from tests.helpers.assignments import REPO

DOCKERFILE = (REPO / "cluster" / "worker.Dockerfile").read_text()


def course_pins() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = [*project["dependencies"], *project["optional-dependencies"]["cluster"]]
    return dict(re.fullmatch(r"([\w\[\].-]+)==(\S+)", requirement).groups() for requirement in requirements)


def test_every_pin_the_image_names_is_the_courses():
    named = dict(re.findall(r"\"?([A-Za-z][\w\[\].-]*)==([\w.+-]+)\"?", DOCKERFILE))
    assert named, "the image names no pin"
    pins = course_pins()
    assert {name: version for name, version in named.items() if pins.get(name) != version} == {}
    assert "torch" in named and "dask[distributed]" in named


def test_the_image_installs_the_course_with_its_cluster_extra_on_its_python():
    python = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    assert python == "==3.11.*" and re.search(r"^FROM python:3\.11-", DOCKERFILE, re.MULTILINE)
    assert '".[cluster]"' in DOCKERFILE
    assert "bubblewrap" in DOCKERFILE


def test_the_images_workers_run_one_job_at_a_time_and_not_as_root():
    assert 'ENTRYPOINT ["dask", "worker", "--nthreads", "1"' in DOCKERFILE
    assert re.search(r"^USER (?!root)\w+", DOCKERFILE, re.MULTILINE)


def test_the_images_workers_keep_dasks_upkeep_as_quiet_as_a_local_cluster():
    """Each setting ``dask_pool.QUIET_UPKEEP`` gives a LocalCluster, in the image's environment."""
    environment = dict(re.findall(r"(DASK_[A-Z_]+)=(\S+)", DOCKERFILE))
    with dask.config.set(dask.config.collect_env(environment)):
        assert {key: dask.config.get(key) for key in QUIET_UPKEEP} == QUIET_UPKEEP
