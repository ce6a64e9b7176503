#include "curated_samples_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "winnow/curation/dataset/curated_samples.h"

namespace py = pybind11;

namespace winnow::python {

namespace {

using curation::CuratedSamples;

// Sample i's content: a str for a text, else a uint8 array [height, width]
// (grey) or [height, width, 3] (colour). Read without the GIL.
py::object content_of(const CuratedSamples& samples, std::size_t i, std::size_t width,
                      std::size_t height, bool colour) {
  curation::TrainingContent content;
  {
    py::gil_scoped_release release;
    content = samples.content(i, {width, height, colour});
  }
  if (content.is_text) return py::str(content.text);
  std::vector<py::ssize_t> shape = {static_cast<py::ssize_t>(content.height),
                                    static_cast<py::ssize_t>(content.width)};
  if (content.channels == 3) shape.push_back(3);
  py::array_t<std::uint8_t> out(shape);
  std::copy(content.pixels.begin(), content.pixels.end(), out.mutable_data());
  return std::move(out);
}

}  // namespace

void bind_curated_samples(py::module_& m) {
  py::class_<CuratedSamples>(m, "CuratedSamples",
                             "The samples of one status of a dataset, now or at a revision.")
      .def(py::init([](const std::string& db, const std::vector<std::string>& statuses,
                       std::optional<std::int64_t> revision) {
             curation::CuratedSampleOptions options;
             options.statuses.clear();
             for (const std::string& status : statuses) {
               options.statuses.push_back(store::parse_sample_status(status));
             }
             options.revision = revision;
             return std::make_unique<CuratedSamples>(db, options);
           }),
           py::arg("db"), py::arg("statuses"), py::arg("revision") = py::none())
      .def("__len__", &CuratedSamples::size)
      .def_property_readonly("revision", &CuratedSamples::revision)
      .def_property_readonly("class_names", &CuratedSamples::class_names)
      .def_property_readonly("ids",
                             [](const CuratedSamples& s) {
                               std::vector<std::int64_t> ids;
                               for (std::size_t i = 0; i < s.size(); ++i) ids.push_back(s.at(i).id);
                               return ids;
                             })
      .def_property_readonly("keys",
                             [](const CuratedSamples& s) {
                               std::vector<std::string> keys;
                               for (std::size_t i = 0; i < s.size(); ++i)
                                 keys.push_back(s.at(i).key);
                               return keys;
                             })
      .def_property_readonly("class_indices",
                             [](const CuratedSamples& s) {
                               std::vector<int> classes;
                               for (std::size_t i = 0; i < s.size(); ++i)
                                 classes.push_back(s.at(i).class_index);
                               return classes;
                             })
      .def_property_readonly("statuses",
                             [](const CuratedSamples& s) {
                               std::vector<std::string> statuses;
                               for (std::size_t i = 0; i < s.size(); ++i)
                                 statuses.emplace_back(store::to_string(s.at(i).status));
                               return statuses;
                             })
      .def_property_readonly("reviewed",
                             [](const CuratedSamples& s) {
                               std::vector<bool> reviewed;
                               for (std::size_t i = 0; i < s.size(); ++i)
                                 reviewed.push_back(s.at(i).reviewed);
                               return reviewed;
                             })
      .def("content", &content_of, py::arg("i"), py::arg("width"), py::arg("height"),
           py::arg("colour"),
           "Sample i's content: a str, or uint8 pixels [height, width(, 3)] at that size.");
}

}  // namespace winnow::python
