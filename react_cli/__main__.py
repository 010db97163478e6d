from react_cli.cli import main

main()
