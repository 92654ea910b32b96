"""What `librarian train` wrote, loaded and checked: the model card, the calibrator. Load-only:
nothing here fits (that is `training/`)."""
