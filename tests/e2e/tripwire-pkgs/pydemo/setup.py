# tests/e2e/tripwire.sh: an ordinary source distribution pip builds and installs
# offline (setuptools, no build isolation), which must not trip a decoy.
from setuptools import setup

setup(name="pydemo", version="1.0.0", py_modules=["pydemo"])
