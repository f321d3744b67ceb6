"""NeSy predictors trained with a formula: SPL (cirkit) and SL (KLay) on the formula's SDD.

Modules (one concept each; importing this package imports nothing heavy):

- :mod:`~autonesy.nesy.backbones` — small CNN for images, MLP for feature vectors;
- :mod:`~autonesy.nesy.constraint` — a CNF compiled once into an SDD, and its cirkit and KLay circuits;
- :mod:`~autonesy.nesy.cirkit_ext` — cirkit extensions: soft-evidence literal leaves, unclamped log semiring;
- :mod:`~autonesy.nesy.spl` — the Semantic Probabilistic Layer (exact log Z_x, MAP predictions);
- :mod:`~autonesy.nesy.mpe` — exact batched MAP over the formula (max-sum on KLay's layers + traceback);
- :mod:`~autonesy.nesy.sl` — the semantic loss, and the unconstrained baseline objective;
- :mod:`~autonesy.nesy.trainer` — seeded training with early stopping, on plain arrays;
- :mod:`~autonesy.nesy.metrics` — downstream metrics and mean ± std over seeds;
- :mod:`~autonesy.nesy.evaluate` — :func:`~autonesy.nesy.evaluate.train_and_evaluate`, formula vs ground truth.

See ``docs/nesy.md`` for the design and the measured costs.
"""
