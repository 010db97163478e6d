"""The loop, the same for every protocol: its events, stop rules, prompt templates and the
protocol seam."""
