"""Wang, Ye and Zhou (W): Table EC.1 and Figure 8 reports, Theorem 1's construction."""
