from reconciler.cli import console_main

console_main()
