// The TorchScript embedder: a module saved from C++ (Module::define), loaded
// through curation's embedder specs, used by a real ingest through the CLI.
#include <catch2/catch.hpp>

#include <torch/script.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/cli_process.h"  // winnow::test::slurp
#include "support/temp_dir.h"
#include "torchscript_projection.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/curation/readers/idx_importer.h"
#include "winnow/error.h"
#include "winnow/torch/torchscript_embedder.h"

namespace {

const std::string kFashion = "/usr/share/datasets/fashion-mnist/";

// A module mapping [B, 1, 28, 28] to [B, 16]: a fixed linear projection.
std::string save_projection(const winnow::test::TempDir& dir, const ::torch::Tensor& weight) {
  const std::string path = dir.file("projection.pt");
  winnow::test::save_projection(path, weight);
  return path;
}

}  // namespace

TEST_CASE("a TorchScript module becomes an embedder through its spec", "[torchscript]") {
  winnow::test::TempDir dir;
  ::torch::manual_seed(0);
  const ::torch::Tensor weight = ::torch::randn({16, 784});
  const std::string path = save_projection(dir, weight);
  winnow::register_torchscript_embedder();

  auto e = winnow::curation::embed::make_embedder("torchscript:" + path);
  CHECK(e->dim() == 16);
  CHECK(e->spec() == "torchscript(path=" + path + ",width=28,height=28)");
  CHECK(winnow::curation::embed::make_embedder(e->spec())->dim() == 16);

  auto records = winnow::curation::readers::import_idx(kFashion + "t10k-images-idx3-ubyte.gz",
                                                       kFashion + "t10k-labels-idx1-ubyte.gz", "t");
  const auto& r = records[0];
  std::vector<float> v = e->embed(r);
  // The same projection by hand, normalised.
  ::torch::Tensor x = ::torch::tensor(std::vector<float>(r.pixels.begin(), r.pixels.end())) / 255.0;
  ::torch::Tensor y = weight.matmul(x);
  y = y / y.norm();
  for (int i = 0; i < 16; ++i) CHECK(v[i] == Approx(y[i].item<float>()).margin(1e-5));

  winnow::curation::ManifestRecord text;
  text.key = "t1";
  text.kind = winnow::curation::ContentKind::text;
  text.text = "hello";
  CHECK_THROWS_WITH(e->embed(text), Catch::Contains("t1") && Catch::Contains("pixels"));
}

TEST_CASE("bad TorchScript embedder specs and models are errors naming them", "[torchscript]") {
  winnow::test::TempDir dir;
  winnow::register_torchscript_embedder();
  CHECK_THROWS_WITH(winnow::curation::embed::make_embedder("torchscript:" + dir.file("missing.pt")),
                    Catch::Contains("missing.pt"));
  std::ofstream(dir.file("garbage.pt")) << "not a model";
  CHECK_THROWS_WITH(winnow::curation::embed::make_embedder("torchscript:" + dir.file("garbage.pt")),
                    Catch::Contains("garbage.pt"));
  // A module whose output is not [1, D].
  ::torch::jit::Module m("Flat");
  m.define(R"(
def forward(self, x):
    return x.reshape([-1])
)");
  m.save(dir.file("flat.pt"));
  CHECK_THROWS_WITH(winnow::curation::embed::make_embedder("torchscript:" + dir.file("flat.pt")),
                    Catch::Contains("flat.pt") && Catch::Contains("[1, D]"));
  CHECK_THROWS_WITH(winnow::curation::embed::make_embedder("torchscript(path=x.pt,depth=3)"),
                    Catch::Contains("depth"));
}

TEST_CASE("the winnow CLI ingests with a TorchScript embedder", "[torchscript]") {
  winnow::test::TempDir dir;
  ::torch::manual_seed(1);
  const std::string model = save_projection(dir, ::torch::randn({16, 784}));
  const std::string db = dir.file("ts.db");
  const std::string cli = WINNOW_CLI_PATH;
  const std::string log = " > " + dir.file("out.txt") + " 2>&1";
  REQUIRE(std::system(
              (cli + " init --db " + db + " --embedder torchscript:" + model + log).c_str()) == 0);
  REQUIRE(std::system((cli + " import-idx --db " + db + " --limit 300 " + kFashion +
                       "t10k-images-idx3-ubyte.gz " + kFashion + "t10k-labels-idx1-ubyte.gz" + log)
                          .c_str()) == 0);
  REQUIRE(std::system(
              (cli + " status --db " + db + " --json > " + dir.file("status.json")).c_str()) == 0);
  const std::string status = winnow::test::slurp(dir.file("status.json"));
  CHECK_THAT(status, Catch::Contains("\"total\": 300"));
  CHECK_THAT(status, Catch::Contains("torchscript(path="));

  // The program does not link LibTorch: the plugin brings it, and only to
  // datasets that use it. Without the plugin the error says where it looks.
  REQUIRE(std::system(("ldd " + cli + " > " + dir.file("ldd.txt")).c_str()) == 0);
  const std::string libraries = winnow::test::slurp(dir.file("ldd.txt"));
  CHECK_THAT(libraries, !Catch::Contains("libtorch"));
  std::filesystem::create_directories(dir.file("no-plugins"));
  CHECK(std::system(("WINNOW_PLUGIN_DIR=" + dir.file("no-plugins") + " " + cli + " init --db " +
                     dir.file("other.db") + " --embedder torchscript:" + model + log)
                        .c_str()) != 0);
  const std::string message = winnow::test::slurp(dir.file("out.txt"));
  CHECK_THAT(message, Catch::Contains("no TorchScript plugin was found"));
}
