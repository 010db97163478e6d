from react_cli.entry import main

main()
