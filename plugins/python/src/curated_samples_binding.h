// winnow._curation.CuratedSamples: the samples a training run reads of a
// dataset (curation/dataset/curated_samples.h), for winnow.CuratedDataset.
#pragma once

#include <pybind11/pybind11.h>

namespace winnow::python {

void bind_curated_samples(pybind11::module_& m);

}  // namespace winnow::python
