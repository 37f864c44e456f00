"""The spec cache speeds start-up and is never stale: keyed by the file's bytes and the loader's code."""

from __future__ import annotations

import json
import shutil

import pytest

from opdefs import spec


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(spec.CACHE_ENV, str(tmp_path / "cache"))
    spec._spec_cache.cache_clear()
    yield tmp_path / "cache"
    spec._spec_cache.cache_clear()


def _copy(tmp_path, name="Relu"):
    d = tmp_path / "specs"
    d.mkdir(exist_ok=True)
    shutil.copy(spec.HERE / f"{name}.yaml", d / f"{name}.yaml")
    return d / f"{name}.yaml"


def test_a_loaded_spec_is_cached_and_read_back_identically(cache_dir, tmp_path):
    path = _copy(tmp_path)
    first = spec.load_file(path)
    spec._spec_cache().save()
    assert (cache_dir / "specs.json").exists(), "no cache written"
    spec._spec_cache.cache_clear()
    again = spec.load_file(path)
    assert again.as_dict() == first.as_dict() and [c.id for c in again.constraints] == [c.id for c in first.constraints]


def test_an_edited_spec_is_never_served_from_the_cache(cache_dir, tmp_path):
    path = _copy(tmp_path)
    spec.load_file(path)
    spec._spec_cache().save()
    path.write_text(path.read_text().replace("summary:", "summary: EDITED", 1))
    spec._spec_cache.cache_clear()
    assert "EDITED" in spec.load_file(path).summary, "the cache served the old text"


def test_a_cache_written_by_other_code_is_ignored(cache_dir, tmp_path):
    path = _copy(tmp_path)
    cache_dir.mkdir(parents=True)
    digest = __import__("hashlib").sha256(path.read_bytes()).hexdigest()
    poisoned = {"code": "another version", "specs": {digest: {"data": {"name": "Poisoned"}, "lines": []}}}
    (cache_dir / "specs.json").write_text(json.dumps(poisoned))
    assert spec.load_file(path).name == "Relu"


def test_a_malformed_spec_is_not_cached_and_still_reports_its_line(cache_dir, tmp_path):
    path = _copy(tmp_path)
    path.write_text(path.read_text().replace("name: Relu", "name: Relu\ncolour: red", 1))
    for _ in range(2):
        spec._spec_cache.cache_clear()
        with pytest.raises(spec.SpecError, match="colour"):
            spec.load_file(path)
        spec._spec_cache().save()
