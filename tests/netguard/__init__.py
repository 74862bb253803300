"""The loopback guard for the test suite; see :mod:`tests.netguard.sitecustomize`."""
