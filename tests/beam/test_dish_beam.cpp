// The dish models of gpuclean_beam (issue 47) against independent evaluations of the published
// coefficients: half-power radii, spot values, monotony, band interpolation and selection, and the
// TELESCOPE_NAME rules and refusals.

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <tuple>

#include "beam/dish_model.hpp"

using namespace gpuclean::beam;

namespace {

constexpr double kArcmin = std::numbers::pi / (180.0 * 60.0);

double arcmin(double rad) { return rad / kArcmin; }

// The reference numbers below come from a pure-Python evaluation (written for this test, sharing
// no code with gpuclean_beam) of the published coefficients: P(x) = Σ a_j x^(2j) with
// x = r[arcmin] · ν[GHz] · sqrt(ν_ref/GHz) (ν_ref: MeerKAT 1.278 GHz, GMRT 1.5 GHz, else 1 GHz;
// "plain": no sqrt factor), vp = sqrt(P) (ATCA: 1/sqrt(P)), ATCA/GMRT interpolated linearly in
// frequency between the bands in vp, floored vp' = vp (1 − 1e-4) + 1e-4, and the first radius where
// vp'² = 0.5 found by a 0.01′ scan and bisection. ASKAP: vp² = exp(−4 ln2 (r / FWHM)²),
// FWHM = 1.09 · c / ν / 12 m. The coefficients it used:
//   MeerKAT: 1, -0.3514e-3, 0.56e-7, -0.0474e-10, 0.00078e-13, 0.00019e-16 (Mauch et al. 2020)
//   GMRT bands 187.5/375/700/1250 MHz (uGMRT 2022 document); ATCA 1332 + 256 k MHz (1/P sets)
//   VLA 1488 MHz: 1, -1.455e-3, 7.92e-7, -1.63e-10; 6052 MHz: 1, -1.445e-3, 7.68e-7, -1.50e-10;
//   328 MHz: 1, -0.980e-3, 4.25e-7, -0.87e-10, 0.69e-14 (EVLA Memo 195 via CASA PBMath1DEVLA)
struct HalfPower {
  DishTelescope telescope;
  FrequencyScaling scaling;
  double frequency_hz;
  double hwhm_arcmin;
};

constexpr HalfPower kHalfPower[] = {
    {DishTelescope::kMeerKAT, FrequencyScaling::kEveryBeam, 1.284e9, 30.178459913},
    {DishTelescope::kMeerKAT, FrequencyScaling::kPlain, 1.284e9, 34.116345170},
    {DishTelescope::kMeerKAT, FrequencyScaling::kEveryBeam, 0.9e9, 43.054602809},
    {DishTelescope::kMeerKAT, FrequencyScaling::kEveryBeam, 1.6e9, 24.218214080},
    {DishTelescope::kGMRT, FrequencyScaling::kEveryBeam, 1250e6, 10.316817025},
    {DishTelescope::kGMRT, FrequencyScaling::kPlain, 1250e6, 12.635468741},
    {DishTelescope::kGMRT, FrequencyScaling::kEveryBeam, 400e6, 30.071863575},   // 375–700 MHz
    {DishTelescope::kGMRT, FrequencyScaling::kEveryBeam, 322e6, 37.346422541},   // 187.5–375 MHz
    {DishTelescope::kGMRT, FrequencyScaling::kEveryBeam, 150e6, 79.360405988},   // below band 2
    {DishTelescope::kATCA, FrequencyScaling::kEveryBeam, 2100e6, 12.249508868},  // a node
    {DishTelescope::kATCA, FrequencyScaling::kEveryBeam, 1500e6, 16.371797594},  // 1332–1588 MHz
    {DishTelescope::kVLA, FrequencyScaling::kEveryBeam, 1.5e9, 13.970843550},    // table 1488
    {DishTelescope::kVLA, FrequencyScaling::kEveryBeam, 6.0e9, 3.496719058},     // table 6052
    {DishTelescope::kVLA, FrequencyScaling::kEveryBeam, 330e6, 79.505195652},    // table 328
    {DishTelescope::kASKAP, FrequencyScaling::kEveryBeam, 888e6, 52.713618661},
    {DishTelescope::kASKAP, FrequencyScaling::kEveryBeam, 1367.5e6, 34.230123123},
};

}  // namespace

TEST(DishBeam, OneOnAxisForEveryModel) {
  for (DishTelescope t : {DishTelescope::kMeerKAT, DishTelescope::kVLA, DishTelescope::kATCA, DishTelescope::kGMRT,
                          DishTelescope::kASKAP}) {
    for (double f : {300e6, 888e6, 1.284e9, 2.1e9, 6e9}) {
      const DishModel model(t);
      EXPECT_DOUBLE_EQ(model.raw_voltage(0.0, f), 1.0) << telescope_label(t) << " " << f;
      EXPECT_DOUBLE_EQ(model.voltage(0.0, f), 1.0) << telescope_label(t) << " " << f;
      EXPECT_DOUBLE_EQ(model.power(0.0, f), 1.0) << telescope_label(t) << " " << f;
    }
  }
}

TEST(DishBeam, HalfPowerRadiiMatchIndependentEvaluation) {
  for (const HalfPower& c : kHalfPower) {
    DishOptions options;
    options.frequency_scaling = c.scaling;
    const DishModel model(c.telescope, options);
    EXPECT_NEAR(arcmin(model.half_power_radius_rad(c.frequency_hz)), c.hwhm_arcmin, 1e-6)
        << telescope_label(c.telescope) << " at " << c.frequency_hz << " Hz";
  }
}

TEST(DishBeam, SpotValuesMatchIndependentEvaluation) {
  // Raw (unfloored) voltages from the same Python evaluation.
  EXPECT_NEAR(DishModel(DishTelescope::kMeerKAT).raw_voltage(20 * kArcmin, 1.284e9), 0.860714385874875, 1e-13);
  EXPECT_NEAR(DishModel(DishTelescope::kGMRT).raw_voltage(15 * kArcmin, 500e6), 0.875528448230131, 1e-13);
  EXPECT_NEAR(DishModel(DishTelescope::kATCA).raw_voltage(10 * kArcmin, 1700e6), 0.857678137632392, 1e-13);
  DishOptions gridded;
  gridded.atca_inverted = false;
  EXPECT_NEAR(DishModel(DishTelescope::kATCA, gridded).raw_voltage(10 * kArcmin, 1700e6), 1.165957219061041, 1e-13);
  EXPECT_NEAR(DishModel(DishTelescope::kVLA).raw_voltage(3 * kArcmin, 6e9), 0.779320046194117, 1e-13);

  // And written out here: MeerKAT's polynomial at x = 25 · 1.284 · sqrt(1.278).
  const double x = 25.0 * 1.284 * std::sqrt(1.278), x2 = x * x;
  const double p = 1.0 - 0.3514e-03 * x2 + 0.5600e-07 * x2 * x2 - 0.0474e-10 * x2 * x2 * x2 +
                   0.00078e-13 * std::pow(x2, 4) + 0.00019e-16 * std::pow(x2, 5);
  EXPECT_NEAR(DishModel(DishTelescope::kMeerKAT).raw_voltage(25 * kArcmin, 1.284e9), std::sqrt(p), 1e-13);
  EXPECT_NEAR(DishModel(DishTelescope::kMeerKAT).voltage(25 * kArcmin, 1.284e9), std::sqrt(p) * (1 - 1e-4) + 1e-4,
              1e-13);
}

TEST(DishBeam, DecreasesMonotonicallyToTheFirstMinimum) {
  // Every model falls from 1 without a rise up to its first minimum or its edge: MeerKAT's first
  // minimum is at x = 77.55 of the edge's 80.26 (fraction 0.9662 of the radius); the others do not
  // rise inside their edge (VLA L: a null at x = 42.20, vp = 0 after it; VLA P, GMRT band 4: a
  // minimum beyond the edge; ATCA inverted and ASKAP: monotone).
  struct Case {
    DishTelescope t;
    double f;
    double first_rise_fraction;  // 0: none inside the edge
  };
  for (const Case& c : {Case{DishTelescope::kMeerKAT, 1.284e9, 0.9662}, Case{DishTelescope::kVLA, 1.5e9, 0},
                        Case{DishTelescope::kVLA, 330e6, 0}, Case{DishTelescope::kATCA, 2.1e9, 0},
                        Case{DishTelescope::kGMRT, 700e6, 0}, Case{DishTelescope::kASKAP, 888e6, 0}}) {
    const DishModel model(c.t);
    const double r_end = std::isfinite(model.max_radius_rad(c.f)) ? model.max_radius_rad(c.f) : 0.05;
    const int n = 5000;
    double previous = model.raw_voltage(0.0, c.f);
    int first_rise = 0;
    for (int k = 1; k <= n; ++k) {
      const double v = model.raw_voltage(r_end * k / n, c.f);
      if (v > previous) {
        first_rise = k;
        break;
      }
      previous = v;
    }
    if (c.first_rise_fraction == 0) {
      EXPECT_EQ(first_rise, 0) << telescope_label(c.t) << " rises at " << first_rise;
    } else {
      EXPECT_NEAR(double(first_rise) / n, c.first_rise_fraction, 1e-3) << telescope_label(c.t);
    }
  }
  // MeerKAT's first minimum (x = 77.55, P = 0.1326) lies inside its edge (x = 71 · sqrt(1.278) = 80.26):
  const DishModel meerkat(DishTelescope::kMeerKAT);
  const double f = 1.284e9, r_min = 77.551 / (1.284 * std::sqrt(1.278)) * kArcmin;
  EXPECT_NEAR(meerkat.raw_voltage(r_min, f) * meerkat.raw_voltage(r_min, f), 0.13259, 1e-4);
  EXPECT_LT(r_min, meerkat.max_radius_rad(f));
  // VLA L band at 1488 MHz crosses zero at x = 42.202: vp = 0 beyond, the floor 1e-4 after flooring.
  const DishModel vla(DishTelescope::kVLA);
  EXPECT_EQ(vla.raw_voltage(43.0 / 1.5 * kArcmin, 1.5e9), 0.0);
  EXPECT_DOUBLE_EQ(vla.voltage(43.0 / 1.5 * kArcmin, 1.5e9), 1e-4);
  EXPECT_GT(vla.raw_voltage(42.0 / 1.5 * kArcmin, 1.5e9), 0.0);
}

TEST(DishBeam, FloorBeyondTheModelsEdge) {
  const DishModel meerkat(DishTelescope::kMeerKAT);
  const double f = 1.284e9;
  EXPECT_NEAR(arcmin(meerkat.max_radius_rad(f)), 71.0 / 1.284, 1e-9);
  const double edge = meerkat.max_radius_rad(f);
  EXPECT_GT(meerkat.voltage(edge * 0.999, f), 0.3);  // P ≈ 0.13–0.14 just inside
  EXPECT_DOUBLE_EQ(meerkat.voltage(edge * 1.001, f), 1e-4);
  EXPECT_DOUBLE_EQ(meerkat.power(edge * 1.001, f), 1e-8);
  EXPECT_NEAR(arcmin(DishModel(DishTelescope::kVLA).max_radius_rad(1e9)), 53.0, 1e-9);
  EXPECT_NEAR(arcmin(DishModel(DishTelescope::kGMRT).max_radius_rad(1e9)), 1.1998662 * 25.0 / 45.0 * 43.0, 1e-9);
  EXPECT_TRUE(std::isinf(DishModel(DishTelescope::kASKAP).max_radius_rad(1e9)));
  // kPlain keeps the edge at the same polynomial argument x.
  DishOptions plain;
  plain.frequency_scaling = FrequencyScaling::kPlain;
  EXPECT_NEAR(arcmin(DishModel(DishTelescope::kMeerKAT, plain).max_radius_rad(f)), 71.0 * std::sqrt(1.278) / 1.284,
              1e-9);
}

TEST(DishBeam, AtcaAndGmrtInterpolateTheVoltageBetweenBands) {
  // Midway between two nodes the voltage is the mean of the two bands' voltages at the same r
  // (the bands' own frequencies give those voltages exactly).
  for (const auto& [t, f0, f1] : {std::tuple{DishTelescope::kGMRT, 375e6, 700e6},
                                  std::tuple{DishTelescope::kATCA, 1588e6, 1844e6}}) {
    const DishModel model(t);
    const double fm = 0.5 * (f0 + f1), l = 0.25;
    for (double r_arcmin_ghz : {5.0, 12.0, 20.0}) {
      // At fixed ρ = r·ν the node voltages are the bands' polynomials; evaluate them at fm's radius.
      const double r = r_arcmin_ghz / (fm * 1e-9) * kArcmin;
      const double v0 = model.raw_voltage(r * fm / f0, f0);  // same ρ at f0
      const double v1 = model.raw_voltage(r * fm / f1, f1);
      EXPECT_NEAR(model.raw_voltage(r, fm), 0.5 * (v0 + v1), 1e-14) << telescope_label(t) << " ρ " << r_arcmin_ghz;
      const double fq = f0 + l * (f1 - f0), rq = r_arcmin_ghz / (fq * 1e-9) * kArcmin;
      EXPECT_NEAR(model.raw_voltage(rq, fq), (1 - l) * model.raw_voltage(rq * fq / f0, f0) + l * model.raw_voltage(rq * fq / f1, f1),
                  1e-14);
    }
  }
  // Outside the bands: the end band's pattern at the same ρ.
  const DishModel gmrt(DishTelescope::kGMRT);
  const double rho = 10.0;
  EXPECT_DOUBLE_EQ(gmrt.raw_voltage(rho / 1.4 * kArcmin, 1.4e9), gmrt.raw_voltage(rho / 1.25 * kArcmin, 1.25e9));
  EXPECT_DOUBLE_EQ(gmrt.raw_voltage(rho / 0.15 * kArcmin, 150e6), gmrt.raw_voltage(rho / 0.1875 * kArcmin, 187.5e6));
}

TEST(DishBeam, AtcaGriddedResponseGrowsAsEveryBeamEvaluatesIt) {
  DishOptions gridded;
  gridded.atca_inverted = false;
  const DishModel wsclean_like(DishTelescope::kATCA, gridded), inverted(DishTelescope::kATCA);
  const double f = 2.1e9, r = 20 * kArcmin;
  EXPECT_GT(wsclean_like.raw_voltage(r, f), 1.0);
  EXPECT_LT(inverted.raw_voltage(r, f), 1.0);
  EXPECT_NEAR(wsclean_like.raw_voltage(r, f) * inverted.raw_voltage(r, f), 1.0, 1e-14);
  EXPECT_TRUE(std::isnan(wsclean_like.half_power_radius_rad(f)));
}

TEST(DishBeam, VlaBandSelectionAndClamping) {
  struct Case {
    double f_hz;
    char band;
    double clamped_hz;
    int table_mhz;
  };
  for (const Case& c : {
           Case{330e6, 'P', 330e6, 328},
           Case{479e6, 'P', 470e6, 470},     // clamped to 470 MHz
           Case{600e6, '?', 600e6, 470},     // between P and L: nearest entry, no clamping
           Case{800e6, '?', 800e6, 1040},
           Case{950e6, 'L', 950e6, 1040},
           Case{1.5e9, 'L', 1.5e9, 1488},
           Case{1.52e9, 'L', 1.52e9, 1552},  // tie 1488/1552 at 1520 MHz: the higher one
           Case{1.995e9, 'L', 1.995e9, 2000},
           Case{2.002e9, 'L', 2.0e9, 2000},  // L holds f < 2003 MHz, clamped to 2000 MHz
           Case{2.01e9, 'S', 2.052e9, 2052}, // S raised to 2052 MHz
           Case{6.0e9, 'C', 6.0e9, 6052},    // tie 5948/6052: the higher one
           Case{10.1e9, 'X', 10.1e9, 10052}, // the table's doubled 10052 key
           Case{11.0e9, 'X', 11.0e9, 10948}, // no 11052 entry
           Case{18.4e9, '?', 18.4e9, 17948}, // between U and K
           Case{18.5e9, '?', 18.5e9, 19052}, // 552 MHz from 17948 and from 19052: the higher one
           Case{33e9, 'A', 33e9, 34052},
           Case{45e9, 'Q', 43.948e9, 43948},
           Case{60e9, '?', 60e9, 43948},
       }) {
    const VlaCoefficientChoice choice = vla_coefficient_choice(c.f_hz);
    EXPECT_EQ(choice.band, c.band) << c.f_hz;
    EXPECT_DOUBLE_EQ(choice.clamped_frequency_hz, c.clamped_hz) << c.f_hz;
    EXPECT_EQ(choice.table_mhz, c.table_mhz) << c.f_hz;
  }
  // The doubled key holds 10948's set: the two frequencies give the same beam at the same ρ.
  const DishModel vla(DishTelescope::kVLA);
  EXPECT_DOUBLE_EQ(vla.raw_voltage(20.0 / 10.052 * kArcmin, 10.052e9), vla.raw_voltage(20.0 / 10.948 * kArcmin, 10.948e9));
}

TEST(DishBeam, EveryBeamTabulationTakesTheSampleBelow) {
  DishOptions tab;
  tab.everybeam_tabulation = true;
  const DishModel exact(DishTelescope::kMeerKAT), tabulated(DishTelescope::kMeerKAT, tab);
  const double f = 1.284e9, step_rho = 71.0 / 9999.0;  // arcmin · GHz between samples
  for (double k : {0.0, 1.0, 1234.0, 5000.0, 9998.0}) {
    // Anywhere inside sample k's interval the tabulated model is the exact one at the sample.
    const double r_sample = k * step_rho / 1.284 * kArcmin;
    const double r_inside = (k + 0.7) * step_rho / 1.284 * kArcmin;
    EXPECT_NEAR(tabulated.raw_voltage(r_inside, f), exact.raw_voltage(r_sample, f), 1e-12) << k;
  }
  // The difference is at most one sample's step of the pattern (< 2e-4 in voltage for MeerKAT).
  double worst = 0;
  for (int i = 0; i != 20000; ++i) {
    const double r = exact.max_radius_rad(f) * i / 20000.0;
    worst = std::max(worst, std::fabs(tabulated.power(r, f) - exact.power(r, f)));
  }
  EXPECT_LT(worst, 2e-4);
  EXPECT_GT(worst, 0.0);
}

TEST(DishBeam, TelescopeNamesAsEveryBeamReadsThem) {
  const auto pick = [](std::string_view name) { return select_dish(name).telescope; };
  EXPECT_EQ(pick("MeerKAT"), DishTelescope::kMeerKAT);
  EXPECT_EQ(pick("MEERKAT"), DishTelescope::kMeerKAT);
  EXPECT_EQ(pick("EVLA"), DishTelescope::kVLA);
  EXPECT_EQ(pick("evla_whatever"), DishTelescope::kVLA);
  EXPECT_EQ(pick("VLA"), DishTelescope::kVLA);   // gpuclean's addition
  EXPECT_EQ(pick("JVLA"), DishTelescope::kVLA);  // gpuclean's addition
  EXPECT_EQ(pick("ATCA"), DishTelescope::kATCA);
  EXPECT_EQ(pick("atca-cabb"), DishTelescope::kATCA);
  EXPECT_EQ(pick("GMRT"), DishTelescope::kGMRT);
  EXPECT_EQ(pick("ASKAP"), DishTelescope::kASKAP);
  EXPECT_FALSE(pick("GMRT2"));     // EveryBeam: exactly "GMRT"
  EXPECT_FALSE(pick("MeerKAT+"));  // exactly "MEERKAT"
  EXPECT_FALSE(pick("VLBA"));
  EXPECT_EQ(DishModel::from_telescope_name("meerkat").telescope(), DishTelescope::kMeerKAT);
}

TEST(DishBeam, RefusalsAreOneLine) {
  for (const char* name : {"LOFAR", "AARTFAAC", "MWA", "OSKAR-SKA-LOW", "OVRO_LWA", "OVRO_MMA"}) {
    const DishSelection s = select_dish(name);
    EXPECT_FALSE(s.telescope) << name;
    EXPECT_NE(s.refusal.find("EveryBeam"), std::string::npos) << s.refusal;
    EXPECT_NE(s.refusal.find("Debian does not package"), std::string::npos) << s.refusal;
    EXPECT_NE(s.refusal.find(std::string("'") + name + "'"), std::string::npos) << s.refusal;
    EXPECT_NE(s.refusal.find("aperture array"), std::string::npos) << s.refusal;
    EXPECT_EQ(s.refusal.find('\n'), std::string::npos);
  }
  for (const char* name : {"ALMA", "MID"}) {
    const DishSelection s = select_dish(name);
    EXPECT_FALSE(s.telescope);
    EXPECT_NE(s.refusal.find("Debian does not package EveryBeam"), std::string::npos) << s.refusal;
  }
  const DishSelection unknown = select_dish("WSRT");
  EXPECT_FALSE(unknown.telescope);
  EXPECT_NE(unknown.refusal.find("'WSRT'"), std::string::npos) << unknown.refusal;
  EXPECT_NE(unknown.refusal.find("TELESCOPE_NAME"), std::string::npos) << unknown.refusal;
  EXPECT_EQ(unknown.refusal.find('\n'), std::string::npos);
  EXPECT_NE(select_dish("").refusal.find("''"), std::string::npos);
  try {
    DishModel::from_telescope_name("LOFAR");
    FAIL() << "LOFAR accepted";
  } catch (const BeamModelError& e) {
    EXPECT_EQ(std::string(e.what()), select_dish("LOFAR").refusal);
  }
  EXPECT_THROW(DishModel::from_telescope_name("Unknown telescope"), BeamModelError);
}
