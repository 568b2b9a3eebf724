"""Directory groups a sign-in joins to the claims before roles are mapped: Microsoft Graph
(groups.py), Google Workspace (google.py), and the bounded HTTP they share (http.py)."""
