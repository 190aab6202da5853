"""Plan over time: demand profiles over the day and week, the monthly forecast, commitments (issue 14 items 1-3).

- :mod:`planner.forecast.profile`: an hour-of-day profile (24 multipliers, optional weekend) -> average-to-peak
  ratios, daily and monthly volumes;
- :mod:`planner.forecast.growth`: the demand multiple of a month, the step that relieves a constraint;
- :mod:`planner.forecast.commitments`: reserved GPUs and provisioned throughput against pay-as-you-go;
- :mod:`planner.forecast.data`: the bundled profiles and commitment prices (package data, the only I/O here).

The first three are pure core modules: no I/O, keyword-only arguments after the leading quantity.
"""
