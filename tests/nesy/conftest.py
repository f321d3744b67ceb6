"""One intra-op thread for the nesy tests: the models are tiny, and on a shared machine torch's
thread pool spinning against other processes made small training runs 10–40× slower."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _single_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
