"""The paper's text protocol: Thought/Action/Observation prompts, their parser and cutter."""
