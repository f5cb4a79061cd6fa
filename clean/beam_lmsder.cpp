#include "clean/beam_lmsder.hpp"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlin.h>

#include <memory>
#include <mutex>
#include <stdexcept>

namespace gpuclean::clean::lmsder {
namespace {

struct Context {
  const Problem* problem;
  Evaluation scratch;
};

int residuals(const gsl_vector* x, void* params, gsl_vector* f) {
  auto* c = static_cast<Context*>(params);
  c->problem->evaluate(x->data, false, c->scratch);
  for (std::size_t i = 0; i < f->size; ++i) gsl_vector_set(f, i, c->scratch.f[i]);
  return GSL_SUCCESS;
}

int jacobian(const gsl_vector* x, void* params, gsl_matrix* j) {
  auto* c = static_cast<Context*>(params);
  c->problem->evaluate(x->data, true, c->scratch);
  for (std::size_t i = 0; i < j->size1; ++i)
    for (std::size_t k = 0; k < j->size2; ++k) gsl_matrix_set(j, i, k, c->scratch.jacobian[k][i]);
  return GSL_SUCCESS;
}

int both(const gsl_vector* x, void* params, gsl_vector* f, gsl_matrix* j) {
  auto* c = static_cast<Context*>(params);
  c->problem->evaluate(x->data, true, c->scratch);
  for (std::size_t i = 0; i < f->size; ++i) {
    gsl_vector_set(f, i, c->scratch.f[i]);
    for (std::size_t k = 0; k < j->size2; ++k) gsl_matrix_set(j, i, k, c->scratch.jacobian[k][i]);
  }
  return GSL_SUCCESS;
}

struct SolverDeleter {
  void operator()(gsl_multifit_fdfsolver* s) const { gsl_multifit_fdfsolver_free(s); }
};

}  // namespace

Result solve(const Problem& problem, const double* x0, double epsabs, double epsrel, int max_iterations) {
  // GSL's default error handler aborts the process; its codes are read here instead.
  static std::once_flag handler;
  std::call_once(handler, [] { gsl_set_error_handler_off(); });
  const std::size_t n = problem.rows(), p = problem.parameters();
  if (p == 0 || p > kMaxParameters || n < p) throw std::invalid_argument("lmsder: too few rows for the parameters");
  Context context{&problem, {}};
  gsl_multifit_function_fdf fdf{&residuals, &jacobian, &both, n, p, &context, 0, 0};
  std::unique_ptr<gsl_multifit_fdfsolver, SolverDeleter> solver(
      gsl_multifit_fdfsolver_alloc(gsl_multifit_fdfsolver_lmsder, n, p));
  if (!solver) throw std::bad_alloc();
  std::array<double, kMaxParameters> start{};
  for (std::size_t k = 0; k < p; ++k) start[k] = x0[k];
  gsl_vector_view initial = gsl_vector_view_array(start.data(), p);
  Result r;
  r.status = gsl_multifit_fdfsolver_set(solver.get(), &fdf, &initial.vector);
  if (r.status == GSL_SUCCESS) {
    do {
      ++r.iterations;
      r.status = gsl_multifit_fdfsolver_iterate(solver.get());
      if (r.status != GSL_SUCCESS) break;
      r.status = gsl_multifit_test_delta(solver->dx, solver->x, epsabs, epsrel);
    } while (r.status == GSL_CONTINUE && r.iterations < max_iterations);
  }
  for (std::size_t k = 0; k < p; ++k) r.x[k] = gsl_vector_get(solver->x, k);
  return r;
}

}  // namespace gpuclean::clean::lmsder
