"""Share and compare runs: trace exports, the eval report page, ``eval show`` and ``eval compare``.

Entry points for the command line (each raises ``react_cli.core.errors`` exceptions only):
``export.export_trace``, ``export.write_output``, ``report.eval_report``, ``show.show_eval``,
``compare.compare_evals``. Nothing heavy is imported here: matplotlib only when a report is built.
"""
