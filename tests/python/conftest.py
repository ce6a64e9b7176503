"""Shared set-up of the winnow Python tests (run through ctest: PYTHONPATH=build/python)."""
import os
import sys

import torch

# helpers.py (datasets that DataLoader workers import by name) lives next to the tests.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
torch.set_num_threads(1)
