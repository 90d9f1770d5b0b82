from django.urls import path

from apps.costs import views

app_name = "costs"

urlpatterns = [
    path("", views.procurement, name="procurement"),
    path("export.csv", views.export_csv, name="export-csv"),
    path("export.json", views.export_json, name="export-json"),
    path("claim/", views.claim, name="claim"),
]
