{ port: 80 }
