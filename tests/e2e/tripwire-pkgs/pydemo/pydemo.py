"""The module of tests/e2e/tripwire.sh's source distribution."""


def hello():
    return "hello from pydemo"
