"""A seed-style C++ program (aclInit ... aclnnCubeMatmulGetWorkspaceSize ... aclnnCubeMatmul ...
aclFinalize) built with CANN's custom-operator example CMakeLists.txt, unchanged, against the
CPU target's prefix build/cpu/install, runs to the end with the right numbers."""

from pathlib import Path

from fakit import cpu_example

SOURCE = Path(__file__).parent / "example" / "test_aclnn_cube_matmul.cpp"


def test_matmul_example_builds_against_the_prefix_and_runs(tmp_path):
    result = cpu_example.build_and_run(SOURCE, tmp_path / "example", kind="custom")
    if cpu_example.reference_root().exists():
        assert result.official, "the reference pack's CMakeLists.txt was not used"
    assert result.run is not None, result.build.stdout + result.build.stderr
    assert result.run.returncode == 0, result.run.stdout + result.run.stderr
    assert "max abs error against the host matmul" in result.run.stdout
