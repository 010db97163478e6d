"""What the model may call: Tool and ToolSet, toolboxes and their registry, Wikipedia's Search
and Lookup, the users' tools."""
