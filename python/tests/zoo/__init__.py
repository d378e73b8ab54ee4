"""The test zoo: fixtures for parity's tests, not part of the package.

models.py      small demo models (ConvBnRelu, TupleTwice, YoloLike, ...)
zoo_models.py  the zoo's models (torchvision, transformers, timm, models.py)
cache.py       the shared cache of their exports and dumps
__main__.py    PYTHONPATH=python:python/tests python -m zoo --out CACHE_DIR

Tests import it as ``zoo`` (pytest puts python/tests on sys.path); the C++
tests and the benches put python/tests on PYTHONPATH.
"""
