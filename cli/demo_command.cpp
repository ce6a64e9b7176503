// winnow demo --workdir DIR [--model mlp|cnn] [--epochs E] [--seed S] [--quick]
//
// winnow's main job, end to end (docs/demo.md): generates noisy Fashion-MNIST
// batches, curates them with `winnow serve`, co-evolves a TorchScript
// embedder, and compares training runs. The job is a Python program,
// examples/demo/main_job.py (it trains with PyTorch and winnow's Python
// module); this command replaces itself with Debian's Python running it, so
// the job's exit code is the command's.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "winnow/error.h"

#ifndef WINNOW_SOURCE_DIR
#error "WINNOW_SOURCE_DIR must name the source tree (set in curation/CMakeLists.txt)"
#endif
#ifndef WINNOW_PYTHON_DIR
#error "WINNOW_PYTHON_DIR must name the built Python package's folder"
#endif

namespace winnow::cli {

namespace {

constexpr const char* kPython = "/usr/bin/python3";  // the one with Debian's torch and numpy

}  // namespace

Command add_demo_command(CLI::App& parent) {
  struct Options {
    std::string workdir, model = "mlp", review_vendor;  // empty: the job's default
    int epochs = 0;                                     // 0: the job's default for the model
    int seed = 2026;
    bool quick = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "demo", "the main job: curate noisy Fashion-MNIST batches, then compare training runs");
  cmd->footer("Example: winnow demo --workdir /tmp/demo --quick");
  cmd->add_option("--workdir", o->workdir,
                  "folder for the data, databases and results (the job's own files are replaced)")
      ->required();
  cmd->add_option("--model", o->model, "mlp or cnn (longer, stronger)")
      ->check(CLI::IsMember({"mlp", "cnn"}))
      ->capture_default_str();
  cmd->add_option("--epochs", o->epochs,
                  "epoch budget of every run (default: the job's for the model, in main_job.py "
                  "--help)");
  // Checked by the job itself, which knows the vendors.
  cmd->add_option("--review-vendor", o->review_vendor,
                  "the vendor that labels pass 2's flagged samples once more (default vendor_a; "
                  "none: no review round)");
  cmd->add_option("--seed", o->seed, "seed of the data generator and the runs")
      ->capture_default_str();
  cmd->add_flag("--quick", o->quick, "smoke run: 3,000 images in 2 batches, 1 epoch");
  return {cmd, [o]() -> int {
            const std::filesystem::path script =
                std::filesystem::path(WINNOW_SOURCE_DIR) / "examples/demo/main_job.py";
            WINNOW_THROW_IF_NOT(std::filesystem::is_regular_file(script),
                                "demo: the job '{}' is missing (this winnow was built from another "
                                "source tree)",
                                script.string());
            WINNOW_THROW_IF_NOT(::access(kPython, X_OK) == 0,
                                "demo: {} is not there (install python3-torch python3-numpy)",
                                kPython);
            // The job drives this very executable.
            const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
            std::string python_path = WINNOW_PYTHON_DIR;
            if (const char* old = std::getenv("PYTHONPATH"); old != nullptr && *old != '\0') {
              python_path += std::string(":") + old;
            }
            ::setenv("PYTHONPATH", python_path.c_str(), 1);

            std::vector<std::string> args = {
                kPython,  script.string(), "--workdir", o->workdir, "--model",
                o->model, "--winnow",      self,        "--seed",   std::to_string(o->seed)};
            if (o->epochs > 0) {
              args.push_back("--epochs");
              args.push_back(std::to_string(o->epochs));
            }
            if (!o->review_vendor.empty()) {
              args.push_back("--review-vendor");
              args.push_back(o->review_vendor);
            }
            if (o->quick) args.push_back("--quick");
            std::vector<char*> argv;
            for (std::string& a : args) argv.push_back(a.data());
            argv.push_back(nullptr);
            ::execv(kPython, argv.data());
            WINNOW_THROW("demo: cannot run {}: {}", kPython, std::strerror(errno));
          }};
}

}  // namespace winnow::cli
