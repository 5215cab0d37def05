"""The page's tabs that are Gradio code of their own: the guided tour, ICR's routing maps, the anchors' and rank-1's
analyses. Every method with a view (`MethodSpec.view`) gets the one generic tab of `app.built_tab` instead."""
