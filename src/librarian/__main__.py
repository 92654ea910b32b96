from librarian.cli import main

main()
