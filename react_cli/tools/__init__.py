"""What the model may call: Tool and ToolSet, the registry, Wikipedia's Search and Lookup."""
