"""The scoreboard: runs of several backends, from any machine or torch, side by side
(``--scoreboard``): ``board`` reads the runs and computes the rows, the clause matrix, the
interop view and the changes since an earlier board; ``render`` makes the page and the
summary. Like the rest of the reports, it reads results files only: no torch."""
