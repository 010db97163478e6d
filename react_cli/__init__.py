"""react-cli: answer questions with the ReAct method (Yao et al., 2022) from the terminal."""

__version__ = "0.1.0"
