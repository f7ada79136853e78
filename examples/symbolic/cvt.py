# The pendulum-driven CVT of systems/cvt.c (Modin & Verdier 2020, eq. 12) as a description for
# nhens-symbolic: the generated plugin agrees with the built-in `cvt` on every callback to round-off
# (ctest -R symbolic). Its basis is derived (elimination on x1), its minimum energy over the sampler's
# support found numerically in xi at run time (SymPy finds none for every eps). The built-in's preset
# anahory2022-fig3 is left out: its printed velocity is 4.4e-5 off the constraint, which the generator refuses.
name = "cvt-symbolic"
summary = "pendulum-driven continuously variable transmission (Modin & Verdier 2020, eq. 12), from SymPy"
reference = "Modin & Verdier 2020 eqs. 11-12; Anahory Simoes et al. 2022 Sect. 5.2; Celledoni et al. 2019 eq. 24"

x1, x2, xi = coordinates("x1 x2 xi", kinds={"xi": "angle"})
eps = parameter("eps", 0.0, range=(-10, 10), help="perturbation of the driver potential cos xi - eps sin(2 xi)/2")
spread = parameter("spread", 1.0, range=(1e-3, 100),
                   help="sampler: x1, x2 ~ N(0, spread^2), xi uniform on (-pi, pi) (the papers give single states only)")

potential = (x1**2 + x2**2) / 2 + cos(xi) - eps * sin(2 * xi) / 2
constraints = [[1, sin(xi), 0]]
presets = [
    state("rotating", "Modin & Verdier 2020, Sect. 3.2 rotating driver (Figs. 6-8), H = 6.0, driver energy 5.0",
          q=[1, 1, 0], v=[0, 0, 2.82842712]),
    state("oscillating", "Modin & Verdier 2020, Sect. 3.2 oscillating driver (Figs. 6-8), xi(0) = pi (bottom), "
          "driver energy 0.8", q=[1, 1, pi], v=[0, 0, 1.8973666]),
    state("anahory2022-fig4", "Anahory Simoes et al. 2022, Sect. 5.2 / Figs. 4-5 (eps = 0.1), energy 6.0",
          q=[1, 1, 0], v=[0, 0, 2.82842712], params={"eps": 0.1}),
    shell("gearbox", "Celledoni et al. 2019, eq. 24 / Fig. 4: gearbox driven by an asymmetric pendulum (eps = 0.4); "
          "random states on H = 2 (Celledoni et al. 2019 give no energy)", energy=2.0, ensemble=1,
          params={"eps": 0.4}),
]
sampler = {x1: normal(0, spread), x2: normal(0, spread), xi: uniform(-pi, pi)}
