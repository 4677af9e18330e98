"""Copy the root zorora.tcss into the built package so an installed wheel finds it."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithStylesheet(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "zorora_tui" / "zorora.tcss"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((Path(__file__).parent / "zorora.tcss").read_bytes())


setup(cmdclass={"build_py": BuildWithStylesheet})
