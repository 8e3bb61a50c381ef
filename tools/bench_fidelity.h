#pragma once
// The model against measured runs (`dash fidelity`, docs/model.md "Fidelity"): the deterministic
// timings of `dash bench --json` files, each (shape, named strategy) re-simulated under a family's
// rates, compared as speedups over fa3 and as times; and the rates fitted to such files. Pure host
// code: it runs on the CPU against committed measurements.
#include <optional>
#include <string>
#include <vector>

#include "dagsim/core/problem.h"
#include "dagsim/core/schedule.h"
#include "dagsim/core/units.h"
#include "dagsim/model/cost_model.h"

namespace dash::cli {

/// One shape of a bench file: the deterministic median time of each named strategy measured.
struct MeasuredShape {
  sim::Problem problem;
  int sms = 0;  ///< the SMs the schedules were made for
  std::string source;  ///< file it came from
  std::vector<std::string> strategies;  ///< fa3 first
  std::vector<double> ms;               ///< per strategy
  /// Per strategy: the non-deterministic (atomic) median time where the file has it, else 0.
  std::vector<double> nondet_ms;
  /// Whether the deterministic / non-deterministic calls zeroed the dQ accumulator first, as the
  /// records' `dq_zeroed` says; absent in files written before the field, whose kernels zeroed it
  /// as sim::zeroes_dq says of a family without first claims.
  std::optional<bool> det_dq_zeroed;
  std::optional<bool> nondet_dq_zeroed;
};

/// The shapes of `dash bench --json` files with a measured deterministic fa3 record: each file's
/// det records of the named strategies (search's schedules are not rebuilt here), with their
/// nondet records beside them. UserError on a file that is not such a document.
std::vector<MeasuredShape> read_measured_shapes(std::vector<std::string> const& files);

struct FidelityRow {
  MeasuredShape const* shape = nullptr;
  std::string strategy;
  sim::Cycles predicted = 0;  ///< makespan, cycles
  double measured_ms = 0;
  double predicted_speedup = 0;  ///< over fa3 (fa3: 1)
  double measured_speedup = 0;
  /// The non-deterministic (atomic) median time; 0 where it was not measured.
  double measured_nondet_ms = 0;
  /// The predicted call, the pre/postprocess passes included: with the order, and without it (the
  /// unordered model, CostModel::ordered; 0 where the nondet run was not measured or the
  /// evaluation left the order out).
  sim::Cycles predicted_call = 0;
  sim::Cycles predicted_nondet_call = 0;

  /// The price of the order: det time / nondet time, predicted and measured; 0 where the
  /// operands are.
  [[nodiscard]] double predicted_order_cost() const {
    return predicted_nondet_call > 0
               ? static_cast<double>(predicted_call) / static_cast<double>(predicted_nondet_call)
               : 0.0;
  }
  [[nodiscard]] double measured_order_cost() const {
    return measured_nondet_ms > 0 ? measured_ms / measured_nondet_ms : 0.0;
  }
};

struct Fidelity {
  std::vector<FidelityRow> rows;
  double speedup_error = 0;  ///< mean |log(predicted / measured speedup)| over non-fa3 rows
  double speedup_error_max = 0;
  double time_error = 0;  ///< mean |log(predicted / measured time)| over every row
  double time_error_max = 0;
  /// Rows whose predicted speedup is within 3% of the measured one (non-fa3 rows).
  int within_3pct = 0;
  int compared = 0;
  /// The same for the price of the order (rows with a nondet time, fa3's too).
  double order_error = 0;
  double order_error_max = 0;
  int order_within_3pct = 0;
  int order_compared = 0;
};

/// The schedules of each shape's strategies, made for its SMs. They do not depend on the rates:
/// build them once for every evaluation of the same shapes.
using ShapeSchedules = std::vector<std::vector<sim::Schedule>>;
ShapeSchedules make_schedules(std::vector<MeasuredShape> const& shapes);

/// Every shape simulated under `rates` (the default model of each problem), cycles at `clock_mhz`;
/// `schedules` = make_schedules(shapes). With `order`, strategies with a nondet time are
/// simulated unordered too (the price of the order); the fit does without.
Fidelity evaluate_fidelity(std::vector<MeasuredShape> const& shapes, ShapeSchedules const& schedules,
                           sim::KernelRates const& rates, int clock_mhz, bool order = true);
/// The same, building the schedules.
Fidelity evaluate_fidelity(std::vector<MeasuredShape> const& shapes, sim::KernelRates const& rates, int clock_mhz);

/// One main-kernel duration: the backward's main kernel alone (no pre/postprocess), measured apart
/// from the passes around it (scripts/kernel_times.sh, tabled by scripts/kernel_times.py --records):
/// what the model's makespan predicts, without the pre/postprocess term.
struct MainKernelTime {
  sim::Problem problem;
  int sms = 0;
  std::string strategy;
  double ms = 0;
  std::string source;
};

/// The records of files written by `scripts/kernel_times.py --records`: bench-style records
/// (`dash bench --json` fields) of det runs of named strategies, each marked "part": "main kernel".
/// UserError on a file that is not such a document (a plain bench file included: its times are
/// whole calls).
std::vector<MainKernelTime> read_main_kernel_times(std::vector<std::string> const& files);

/// The schedules of the records' strategies, made for their SMs (rate-independent, as ShapeSchedules).
std::vector<sim::Schedule> make_schedules(std::vector<MainKernelTime> const& times);

/// The makespan against measured main-kernel durations: mean and max |log(predicted / measured)|,
/// and how many within 3%.
struct MainKernelFidelity {
  double error = 0;
  double error_max = 0;
  int within_3pct = 0;
  int compared = 0;
};
/// `whole` (optional): an evaluation of whole calls under the same rates whose row `rows[k]` (>= 0)
/// simulated record k's problem, SMs and strategy already (main_kernel_rows): its makespan is taken
/// instead of simulating the record again.
MainKernelFidelity evaluate_main_kernel(std::vector<MainKernelTime> const& times,
                                        std::vector<sim::Schedule> const& schedules, sim::KernelRates const& rates,
                                        int clock_mhz, Fidelity const* whole = nullptr,
                                        std::vector<int> const& rows = {});

/// Per record, the index of the row of evaluate_fidelity(shapes, ...) that simulates the same
/// problem, SMs and strategy, or -1: the main-kernel records of a grid run are usually the grid's
/// own shapes, so a fit or a report simulates them once.
std::vector<int> main_kernel_rows(std::vector<MainKernelTime> const& times, std::vector<MeasuredShape> const& shapes);

/// Main-kernel durations a fit also answers to: the records and their schedules.
struct MainKernelSet {
  std::vector<MainKernelTime> times;
  std::vector<sim::Schedule> schedules;
};

/// The rates that minimize speedup_error + time_error over `shapes` (plus, with `main` non-empty,
/// the makespan's error against its main-kernel durations), by coordinate descent from `start` (F,
/// B, L, the pre/postprocess rate, o and, where `start` has a memory floor, its HBM bandwidth; k and
/// the L2 kept), steps shrinking from 25% to 1%. `hold_prepost` keeps start's pre/postprocess rate
/// (one measured apart from the main kernel: scripts/kernel_times.sh).
sim::KernelRates fit_rates(std::vector<MeasuredShape> const& shapes, ShapeSchedules const& schedules,
                           sim::KernelRates start, int clock_mhz, bool hold_prepost = false,
                           MainKernelSet const& main = {});

}  // namespace dash::cli
